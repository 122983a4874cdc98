package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/agents/redact"
	"github.com/kodustech/kodyls/editors/contract"
	"github.com/kodustech/kodyls/index"
	"github.com/kodustech/kodyls/prompts"
)

// newGateway builds the LLM gateway from the resolved settings. The store,
// when given, keeps the response cache and the usage log, so an identical
// request costs no call across restarts; prompts render the gateway's repair
// and fallback messages (workspace overrides included).
func newGateway(cfg contract.Settings, st *index.Store, prm *prompts.Set, redactor llm.Redactor, log *slog.Logger, extra ...llm.Option) (*llm.Gateway, error) {
	if !cfg.LLMConfigured() {
		return nil, llm.ErrNotConfigured
	}
	models := map[llm.TaskClass]string{}
	for task, m := range cfg.LLM.Models {
		models[llm.TaskClass(task)] = m
	}
	opts := append([]llm.Option{llm.WithLogger(log)}, extra...)
	if redactor != nil {
		opts = append(opts, llm.WithRedactor(redactor))
	}
	if st != nil {
		opts = append(opts, llm.WithCache(st.KV()), llm.WithUsage(usageLog{st}))
	}
	if prm != nil {
		opts = append(opts, llm.WithPrompts(func(name string, data any) (string, error) {
			r, err := prm.Render(name, data)
			return r.Text, err
		}))
	}
	g, err := llm.New(llm.Config{
		BaseURL:       cfg.LLM.BaseURL,
		APIKey:        cfg.LLM.APIKey,
		Model:         cfg.LLM.Model,
		Models:        models,
		Timeout:       time.Duration(cfg.LLM.TimeoutMS) * time.Millisecond,
		MaxConcurrent: cfg.LLM.MaxConcurrent,
	}, opts...)
	if err != nil {
		return nil, fmt.Errorf("llm gateway: %w", err)
	}
	return g, nil
}

// usageLog adapts the sqlite store to the gateway's usage sink.
type usageLog struct{ st *index.Store }

func (u usageLog) RecordUsage(ctx context.Context, r llm.Usage) error {
	return u.st.RecordUsage(ctx, index.UsageRecord{
		At: r.At, Feature: r.Feature, Model: r.Model,
		PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens,
		Latency: r.Latency, Cached: r.Cached, Attempts: r.Attempts, Err: r.Err,
	})
}

// defaultRedactor is applied to every text sent to the model.
func defaultRedactor() llm.Redactor { return redact.Default() }
