package planmode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kodustech/kodyls/agents/llm"
)

// Assessment is a reflection's verdict.
type Assessment string

// Assessments. Complete and failed end the run; the others continue it,
// with the adjustments the reflection asks for.
const (
	AssessComplete        Assessment = "complete"
	AssessOnTrack         Assessment = "on_track"
	AssessNeedsAdjustment Assessment = "needs_adjustment"
	AssessOffTrack        Assessment = "off_track"
	AssessFailed          Assessment = "failed"
)

// Reflection is the assessment of a plan after it ran.
type Reflection struct {
	Version     int          `json:"version"` // the plan version assessed
	Assessment  Assessment   `json:"assessment"`
	Reasoning   string       `json:"reasoning"`
	Adjustments []Adjustment `json:"adjustments,omitempty"`
	// Fallback is set when the model could not assess and the safe
	// default (on_track, no adjustment) was used.
	Fallback bool `json:"fallback,omitempty"`
}

// DraftAdjustment is an adjustment as the model writes it.
type DraftAdjustment struct {
	Type   string         `json:"type" jsonschema:"MODIFY, RETRY, SKIP, ADD_BEFORE, ADD_AFTER or REPLACE"`
	StepID string         `json:"stepId" jsonschema:"the id of the step to change"`
	Input  map[string]any `json:"input,omitempty" jsonschema:"MODIFY and RETRY: the new arguments of the step's tool"`
	Step   *DraftStep     `json:"step,omitempty" jsonschema:"ADD_BEFORE, ADD_AFTER and REPLACE: the new step"`
	Reason string         `json:"reason" jsonschema:"why"`
}

// DraftReflection is the reflector's reply.
type DraftReflection struct {
	Assessment  string            `json:"assessment" jsonschema:"complete, on_track, needs_adjustment, off_track or failed"`
	Reasoning   string            `json:"reasoning" jsonschema:"what the results show, in one to three sentences"`
	Adjustments []DraftAdjustment `json:"adjustments" jsonschema:"the changes to the plan; empty unless needs_adjustment or off_track"`
}

// ModelReflector asks the model to assess the plan. When the model fails,
// the reflection is the safe default: on_track with no adjustment, so
// the run carries on as planned.
type ModelReflector struct {
	Gateway *llm.Gateway
	Feature string
	// Prompt renders the system and user prompts of a reflection.
	Prompt func(s State) (system, user string, err error)
}

// Reflect implements Reflector.
func (r *ModelReflector) Reflect(ctx context.Context, s State) (Reflection, error) {
	sys, user, err := r.Prompt(s)
	if err != nil {
		return Reflection{}, fmt.Errorf("reflection prompt: %w", err)
	}
	var msgs []llm.Message
	if sys != "" {
		msgs = append(msgs, llm.Message{Role: "system", Content: sys})
	}
	if stuck := s.Plan.Stuck(); len(stuck) > 0 {
		user += fmt.Sprintf("\n\nStuck: %s ran %d times without getting through and will not run again; this reflection ends the run. Assess whether the goal is met anyway (complete) or not (failed).",
			strings.Join(stuck, ", "), MaxAttempts)
	}
	msgs = append(msgs, llm.Message{Role: "user", Content: user})
	types := make([]any, len(AdjustmentTypes))
	for i, t := range AdjustmentTypes {
		types[i] = string(t)
	}
	d, _, err := llm.Structured[DraftReflection](ctx, r.Gateway, llm.StructuredRequest{
		ChatRequest: llm.ChatRequest{Feature: r.Feature, Task: llm.TaskAgent, Messages: msgs, NoCache: true},
		SchemaName:  "reflection",
		Allowed: map[string][]any{
			"assessment":       {string(AssessComplete), string(AssessOnTrack), string(AssessNeedsAdjustment), string(AssessOffTrack), string(AssessFailed)},
			"adjustments.type": types,
		},
	}, nil)
	if err != nil {
		if ctx.Err() != nil {
			return Reflection{}, ctx.Err()
		}
		return Continue(s.Plan.Version, "the model could not assess the plan ("+err.Error()+"); continuing as planned"), nil
	}
	out := Reflection{Version: s.Plan.Version, Assessment: Assessment(d.Assessment), Reasoning: strings.TrimSpace(d.Reasoning)}
	for _, a := range d.Adjustments {
		adj := Adjustment{Type: AdjustmentType(strings.ToUpper(a.Type)), StepID: a.StepID, Reason: a.Reason}
		if len(a.Input) > 0 {
			adj.Input, _ = json.Marshal(a.Input)
		}
		if a.Step != nil {
			st := a.Step.Step()
			adj.Step = &st
		}
		out.Adjustments = append(out.Adjustments, adj)
	}
	return out, nil
}

// Continue is the safe default reflection: on track, nothing to change.
func Continue(version int, why string) Reflection {
	return Reflection{Version: version, Assessment: AssessOnTrack, Reasoning: why, Fallback: true}
}
