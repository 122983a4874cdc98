package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
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
	// The common words of a lookup are scored from the text of the
	// documents its uncommon words match (see textTerm) when those are at
	// most one in textShare of the history, or textMin: reading and
	// analysing a document's text costs about as much as bleve decoding a
	// thousand postings.
	textShare = 1000
	textMin   = 10
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
		hits = nil // a second run, on a rebuilt index, starts over
		words, err := analyzed(idx, text)
		if err != nil {
			return err
		}
		rare, common, rareDocs, docs, err := byFrequency(ctx, idx, words, similarFields)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		if len(rare) > 0 {
			q := bleve.NewBooleanQuery()
			q.AddMust(kindQuery(), anyWord(rare, similarFields))
			switch {
			case len(common) == 0:
			case rareDocs <= max(docs/textShare, textMin):
				// The common words only count in the few documents the
				// uncommon ones match.
				texts := newDocTexts(idx.Mapping().AnalyzerNamed(analyzerName), rare, similarFields)
				q.AddShould(anyWordFromText(common, similarFields, texts))
			default:
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
// and the common ones; words the index does not hold are dropped. rareDocs
// is the sum of the uncommon words' postings over fields, a bound on the
// documents they match; n is the number of documents.
func byFrequency(ctx context.Context, idx bleve.Index, words, fields []string) (rare, common []string, rareDocs, n uint64, err error) {
	ai, err := idx.Advanced()
	if err != nil {
		return nil, nil, 0, 0, err
	}
	r, err := ai.Reader()
	if err != nil {
		return nil, nil, 0, 0, err
	}
	defer r.Close()
	n, err = r.DocCount()
	if err != nil {
		return nil, nil, 0, 0, err
	}
	limit := max(uint64(float64(n)*commonShare), commonMin)
	for _, w := range words {
		var df uint64
		for _, f := range fields {
			tfr, err := r.TermFieldReader(ctx, []byte(w), f, false, false, false)
			if err != nil {
				return nil, nil, 0, 0, err
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
			rareDocs += df
		}
	}
	return rare, common, rareDocs, n, nil
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

// anyWordFromText is anyWord with every term scored from the text of the
// documents (see textTerm).
func anyWordFromText(words, fields []string, texts *docTexts) query.Query {
	var qs []query.Query
	for _, w := range words {
		for _, f := range fields {
			qs = append(qs, textTerm{term: w, field: f, texts: texts})
		}
	}
	return bleve.NewDisjunctionQuery(qs...)
}

// textTerm is a term query (boost 1) on field for the should clause of
// a query whose must clause matches only documents holding one of a few
// uncommon words. Its reader skips through the postings without decoding
// them. In the documents that hold an uncommon word it takes the term's
// frequency and the field's norm from the document's stored text,
// analysed as indexing analysed it, so they score exactly as with a term
// query; in any other document it reports 1 and 1, since the must clause
// never lets such a document through and its score is never used.
// Decoding costs a step for every posting passed, which for a word in a
// tenth of a large history is most of a lookup; the text costs one read
// per candidate document.
type textTerm struct {
	term, field string
	texts       *docTexts
}

func (q textTerm) Searcher(ctx context.Context, i index.IndexReader, m mapping.IndexMapping, options search.SearcherOptions) (search.Searcher, error) {
	return searcher.NewTermSearcher(ctx, textReader{IndexReader: i, texts: q.texts}, q.term, q.field, 1, options)
}

type textReader struct {
	index.IndexReader
	texts *docTexts
}

func (r textReader) TermFieldReader(ctx context.Context, term []byte, field string, _, _, _ bool) (index.TermFieldReader, error) {
	// The candidates are found in the snapshot the search reads: document
	// numbers change when segments merge.
	if err := r.texts.find(ctx, r.IndexReader); err != nil {
		return nil, err
	}
	tfr, err := r.IndexReader.TermFieldReader(ctx, term, field, false, false, false)
	if err != nil {
		return nil, err
	}
	return &textTermReader{TermFieldReader: tfr, term: string(term), field: field, texts: r.texts}, nil
}

type textTermReader struct {
	index.TermFieldReader
	term, field string
	texts       *docTexts
}

func (t *textTermReader) Next(pre *index.TermFieldDoc) (*index.TermFieldDoc, error) {
	d, err := t.TermFieldReader.Next(pre)
	return t.fill(d, err)
}

func (t *textTermReader) Advance(id index.IndexInternalID, pre *index.TermFieldDoc) (*index.TermFieldDoc, error) {
	d, err := t.TermFieldReader.Advance(id, pre)
	return t.fill(d, err)
}

func (t *textTermReader) fill(d *index.TermFieldDoc, err error) (*index.TermFieldDoc, error) {
	if err != nil || d == nil {
		return d, err
	}
	d.Freq, d.Norm, err = t.texts.stats(d.ID, t.field, t.term)
	return d, err
}

// docTexts holds, for one search, the candidate documents (those holding
// one of the words in one of the fields) and the analysed fields of those
// read so far.
type docTexts struct {
	a             analysis.Analyzer
	words, fields []string

	r    index.IndexReader   // the snapshot the candidates are numbered in
	cand map[string]struct{} // internal ids
	docs map[string]map[string][]string
}

func newDocTexts(a analysis.Analyzer, words, fields []string) *docTexts {
	return &docTexts{a: a, words: words, fields: fields}
}

// find collects the candidates in r, once.
func (t *docTexts) find(ctx context.Context, r index.IndexReader) error {
	if t.cand != nil {
		if t.r != r {
			return errors.New("similar errors: one search read two snapshots of the index")
		}
		return nil
	}
	if t.a == nil {
		return fmt.Errorf("search index has no analyzer %q", analyzerName)
	}
	cand := map[string]struct{}{}
	for _, w := range t.words {
		for _, f := range t.fields {
			tfr, err := r.TermFieldReader(ctx, []byte(w), f, false, false, false)
			if err != nil {
				return err
			}
			for {
				d, err := tfr.Next(nil)
				if err != nil {
					_ = tfr.Close()
					return err
				}
				if d == nil {
					break
				}
				cand[string(d.ID)] = struct{}{}
			}
			if err := tfr.Close(); err != nil {
				return err
			}
		}
	}
	t.r, t.cand, t.docs = r, cand, map[string]map[string][]string{}
	return nil
}

// stats returns the frequency of term in field of document id and the
// field's norm, as the index stores them: the norm is 1/sqrt of the
// field's number of tokens, kept as a float32. For a document that is no
// candidate it returns 1 and 1 without reading it.
func (t *docTexts) stats(id index.IndexInternalID, field, term string) (uint64, float64, error) {
	if _, ok := t.cand[string(id)]; !ok {
		return 1, 1, nil
	}
	fields, ok := t.docs[string(id)]
	if !ok {
		ext, err := t.r.ExternalID(id)
		if err != nil {
			return 0, 0, err
		}
		doc, err := t.r.Document(ext)
		if err != nil {
			return 0, 0, err
		}
		if doc == nil {
			return 0, 0, fmt.Errorf("document %s has no stored fields", ext)
		}
		fields = map[string][]string{}
		doc.VisitFields(func(f index.Field) {
			if !slices.Contains(t.fields, f.Name()) {
				return
			}
			toks := t.a.Analyze(f.Value())
			terms := make([]string, len(toks))
			for i, tok := range toks {
				terms[i] = string(tok.Term)
			}
			fields[f.Name()] = terms
		})
		t.docs[string(id)] = fields
	}
	terms := fields[field]
	if len(terms) == 0 {
		return 0, 0, fmt.Errorf("document has no text in field %s", field)
	}
	var freq uint64
	for _, w := range terms {
		if w == term {
			freq++
		}
	}
	return freq, float64(float32(1 / math.Sqrt(float64(len(terms))))), nil
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
