package index

import (
	"context"
	"fmt"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// A word of an error is common when more than commonShare of the history's
// documents (and more than commonMin) contain it. "undefined" or "type"
// occur in a large part of any history: a search that must score every
// document holding them costs time in proportion to the history, which is
// what made lookups slow at 100,000 errors.
const (
	commonShare = 0.01
	commonMin   = 50
	// templateCandidates bounds the errors of the same kind that the
	// fallback of similar scores.
	templateCandidates = 100
)

// similar finds history documents like text, best first, at a cost that
// does not grow with the history:
//   - the candidates are the documents holding one of text's uncommon
//     words; common words only add to their score;
//   - when that finds fewer than k, the most recent errors with the same
//     template (the same kind of error, found through sqlite) are scored
//     too, so a new identifier among common words still finds its kind.
func (h *LocalHistory) similar(ctx context.Context, workspace, template, text string, k int) ([]Hit, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var hits []Hit
	err := h.x.with(ctx, func(idx bleve.Index) error {
		words, err := analyzed(idx, text)
		if err != nil {
			return err
		}
		rare, common, err := byFrequency(ctx, idx, words, similarFields)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		if len(rare) > 0 {
			q := bleve.NewBooleanQuery()
			q.AddMust(kindQuery(), anyWord(rare, similarFields))
			if len(common) > 0 {
				q.AddShould(anyWord(common, similarFields))
			}
			if err := runQuery(ctx, idx, q, k, seen, &hits); err != nil {
				return err
			}
		}
		if len(hits) >= k || template == "" {
			return nil
		}
		ids, err := h.sameTemplate(ctx, workspace, template)
		if err != nil || len(ids) == 0 {
			return err
		}
		q := bleve.NewConjunctionQuery(kindQuery(), bleve.NewDocIDQuery(ids), anyWord(words, similarFields))
		return runQuery(ctx, idx, q, k, seen, &hits)
	})
	if err != nil {
		return nil, err
	}
	return hits, nil
}

// analyzed returns the distinct words of text as the index sees them.
func analyzed(idx bleve.Index, text string) ([]string, error) {
	a := idx.Mapping().AnalyzerNamed(analyzerName)
	if a == nil {
		return nil, fmt.Errorf("search index has no analyzer %q", analyzerName)
	}
	var words []string
	seen := map[string]bool{}
	for _, tok := range a.Analyze([]byte(text)) {
		w := string(tok.Term)
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words, nil
}

// byFrequency splits words into the uncommon ones that occur in the index
// and the common ones; words the index does not hold are dropped.
func byFrequency(ctx context.Context, idx bleve.Index, words, fields []string) (rare, common []string, err error) {
	ai, err := idx.Advanced()
	if err != nil {
		return nil, nil, err
	}
	r, err := ai.Reader()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	n, err := r.DocCount()
	if err != nil {
		return nil, nil, err
	}
	limit := max(uint64(float64(n)*commonShare), commonMin)
	for _, w := range words {
		var df uint64
		for _, f := range fields {
			tfr, err := r.TermFieldReader(ctx, []byte(w), f, false, false, false)
			if err != nil {
				return nil, nil, err
			}
			df += tfr.Count()
			_ = tfr.Close()
		}
		switch {
		case df == 0:
		case df > limit:
			common = append(common, w)
		default:
			rare = append(rare, w)
		}
	}
	return rare, common, nil
}

// kindQuery matches the history documents. Every search of similar
// intersects with it, so it is advanced to each candidate in turn; a plain
// term query would decode the frequency and norm of every document it
// passes on the way, a cost in proportion to the history (scorch reads
// them one posting at a time). kindTerm skips through the postings
// instead and scores exactly as the term query would.
func kindQuery() query.Query { return kindTerm{} }

// kindTerm is a term query for docKindField = docKindValue. Every history
// document holds that field once, as a single token (see docOp), so its
// frequency and norm are 1 in every document: the reader states them
// rather than decoding them.
type kindTerm struct{}

func (kindTerm) Searcher(ctx context.Context, i index.IndexReader, m mapping.IndexMapping, options search.SearcherOptions) (search.Searcher, error) {
	return searcher.NewTermSearcher(ctx, unitReader{i}, docKindValue, docKindField, 1, options)
}

// unitReader is i with term readers that report a frequency and norm of 1
// without reading them.
type unitReader struct{ index.IndexReader }

func (r unitReader) TermFieldReader(ctx context.Context, term []byte, field string, _, _, _ bool) (index.TermFieldReader, error) {
	tfr, err := r.IndexReader.TermFieldReader(ctx, term, field, false, false, false)
	if err != nil {
		return nil, err
	}
	return unitTermReader{tfr}, nil
}

type unitTermReader struct{ index.TermFieldReader }

func (r unitTermReader) Next(pre *index.TermFieldDoc) (*index.TermFieldDoc, error) {
	return unit(r.TermFieldReader.Next(pre))
}

func (r unitTermReader) Advance(id index.IndexInternalID, pre *index.TermFieldDoc) (*index.TermFieldDoc, error) {
	return unit(r.TermFieldReader.Advance(id, pre))
}

func unit(d *index.TermFieldDoc, err error) (*index.TermFieldDoc, error) {
	if d != nil {
		d.Freq, d.Norm = 1, 1
	}
	return d, err
}

// anyWord matches documents holding any of words in any of fields.
func anyWord(words, fields []string) query.Query {
	var qs []query.Query
	for _, w := range words {
		for _, f := range fields {
			t := bleve.NewTermQuery(w)
			t.SetField(f)
			qs = append(qs, t)
		}
	}
	return bleve.NewDisjunctionQuery(qs...)
}

// runQuery appends the top k hits of q that are not in seen.
func runQuery(ctx context.Context, idx bleve.Index, q query.Query, k int, seen map[string]bool, hits *[]Hit) error {
	res, err := idx.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, k, 0, false))
	if err != nil {
		return err
	}
	for _, hit := range res.Hits {
		if !seen[hit.ID] {
			seen[hit.ID] = true
			*hits = append(*hits, Hit{ID: hit.ID, Score: hit.Score})
		}
	}
	return nil
}

// sameTemplate returns the search document IDs of the most recent errors
// with this template (in workspace, unless it is "").
func (h *LocalHistory) sameTemplate(ctx context.Context, workspace, template string) ([]string, error) {
	q := `SELECT id FROM errors WHERE template = ?`
	args := []any{template}
	if workspace != "" {
		q += ` AND workspace = ?`
		args = append(args, workspace)
	}
	q += ` ORDER BY last_seen DESC LIMIT ?`
	args = append(args, templateCandidates)
	ids, err := h.queryIDs(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("errors of the same kind: %w", err)
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = errDocID(id)
	}
	return out, nil
}
