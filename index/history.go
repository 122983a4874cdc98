package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// Explanation sources.
const (
	SourceModel   = "model"   // written by the LLM
	SourceHistory = "history" // reused from an earlier, similar error
	SourceOffline = "offline" // built without a model, from rules
)

// errDocPrefix starts the bleve ID of every history document, so that they
// can be told apart from other documents in the same index.
const errDocPrefix = "err:"

// Every history document carries docKindField = docKindValue. Queries are
// restricted to it with a term query, so other kinds of documents sharing
// the index never crowd errors out of the top k. The value is one token
// under the kodyls analyzer and no word a user would search for.
const (
	docKindField = "doc_kind"
	docKindValue = "kodyls_error_history"
)

// similarFields are the fields Similar matches on: what the error says,
// not what we later said about it.
var similarFields = []string{"template", "message", "code"}

// searchFields are the fields a user's history search matches on.
var searchFields = []string{"template", "message", "code", "root_cause", "tool", "language"}

// ErrorRecord is one build error as the history keeps it. Fingerprint
// identifies the same error across occurrences; Template is the message with
// the variable parts (names, numbers) abstracted away.
type ErrorRecord struct {
	Workspace, Fingerprint, Tool, Language, Code, Message, Template, File, Raw string
	// MessageHash identifies this very error (see Explanation.MessageHash)
	// when it is looked up: Similar then prefers the explanation given
	// for it. It is not stored with the error, whose row stands for every
	// error of its kind.
	MessageHash string
}

// Explanation is one answer kodyls gave for an error.
type Explanation struct {
	RootCause   string
	Steps       []string
	Confidence  float64
	Source      string // SourceModel, SourceHistory or SourceOffline
	Model       string
	ContentHash string // hash of the involved files' content when explained
	// Message is the error message the explanation was given for: the
	// error's row holds the latest occurrence's, which may be another
	// error of the same kind. "" for explanations stored before kodyls
	// kept it.
	Message string
	// MessageHash identifies the exact error explained (its message and
	// line, as the caller hashes them); Cached reuses an explanation only
	// for the same hash. "": none, never reused.
	MessageHash string
	CreatedAt   time.Time
	Feedback    int // -1, 0 or 1
}

// HistoryEntry is a remembered error with its latest explanation.
type HistoryEntry struct {
	ErrorID int64
	ErrorRecord
	FirstSeen, LastSeen time.Time
	Count               int
	Latest              *Explanation // nil if never explained
	Score               float64      // search score; 1 for exact fingerprint matches
	Exact               bool
}

// LocalHistory is the error history kept on this machine: rows in the
// sqlite store, searchable through the bleve index. x may be nil, in which
// case nothing is indexed, Similar finds exact matches only and Search
// fails. Open it with [OpenHistory].
type LocalHistory struct {
	st *Store
	x  *Search
	// now is the clock, a field so tests can make times distinct.
	now func() time.Time
	log *slog.Logger
	// stopWarm stops the background open of the index; warmed is closed
	// when it has ended.
	stopWarm context.CancelFunc
	warmed   chan struct{}
	// stmts are the lookup's statements, prepared once (see stmt).
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt
}

// newLocalHistory returns the history kept in st and indexed in x. The
// index is filled from sqlite whenever it is new (see Search.fill).
func newLocalHistory(st *Store, x *Search) *LocalHistory {
	h := &LocalHistory{st: st, x: x, now: time.Now, log: slog.New(slog.DiscardHandler)}
	if x != nil {
		x.fill = h.fill
	}
	return h
}

// Close lets go of the search index (see Search.Hold). The store stays
// open; it belongs to the caller.
func (h *LocalHistory) Close() error {
	if h.stopWarm != nil {
		h.stopWarm()
		<-h.warmed
	}
	h.stmtMu.Lock()
	for _, st := range h.stmts {
		_ = st.Close()
	}
	h.stmts = nil
	h.stmtMu.Unlock()
	if h.x == nil {
		return nil
	}
	return h.x.Close()
}

// warm opens the index in the background, so that the first lookup does
// not pay for opening (or rebuilding) it. Close stops it.
func (h *LocalHistory) warm() {
	ctx, cancel := context.WithCancel(context.Background())
	h.stopWarm, h.warmed = cancel, make(chan struct{})
	go func() {
		defer close(h.warmed)
		if err := h.x.Warm(ctx); err != nil && ctx.Err() == nil {
			h.log.Warn("cannot open the search index of the error history yet", "error", err)
		}
	}()
}

// fill writes the search document of every error in sqlite to idx, in
// batches; it rebuilds a new, deleted or damaged index.
func (h *LocalHistory) fill(ctx context.Context, idx bleve.Index) (int, error) {
	var after int64
	total := 0
	for {
		rows, err := h.st.Reader().QueryContext(ctx, `SELECT e.id, e.template, e.message, e.code, e.language, e.tool,
  COALESCE((SELECT x.root_cause FROM explanations x WHERE x.error_id = e.id ORDER BY x.created_at DESC, x.id DESC LIMIT 1), '')
FROM errors e WHERE e.id > ? ORDER BY e.id LIMIT ?`, after, flushChunk)
		if err != nil {
			return total, err
		}
		var ops []op
		for rows.Next() {
			var (
				id        int64
				e         ErrorRecord
				rootCause string
			)
			if err := rows.Scan(&id, &e.Template, &e.Message, &e.Code, &e.Language, &e.Tool, &rootCause); err != nil {
				rows.Close()
				return total, err
			}
			ops = append(ops, docOp(id, e, rootCause))
			after = id
		}
		if err := rows.Close(); err != nil {
			return total, err
		}
		if err := rows.Err(); err != nil {
			return total, err
		}
		if len(ops) == 0 {
			return total, nil
		}
		if err := applyOps(idx, ops); err != nil {
			return total, err
		}
		total += len(ops)
	}
}

// Record remembers one occurrence of e: the first one inserts it, later ones
// bump its count and last-seen time. It returns the error's id. The search
// document is queued in the same transaction and written to the index
// after the commit, so once Record returns the error is findable, now or,
// if the index is busy or broken, as soon as it is opened again.
func (h *LocalHistory) Record(ctx context.Context, e ErrorRecord) (int64, error) {
	if e.Fingerprint == "" {
		return 0, errors.New("record error: empty fingerprint")
	}
	now := h.now().UnixMilli()
	var id int64
	var rootCause string
	err := h.st.Write(ctx, func(tx *sql.Tx) error {
		// The text columns are refreshed too: the latest wording is the
		// one most likely to match the next occurrence.
		err := tx.QueryRowContext(ctx, `
INSERT INTO errors (workspace, fingerprint, tool, language, code, message, template, file, raw, first_seen, last_seen, count)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
ON CONFLICT (workspace, fingerprint) DO UPDATE SET
  tool = excluded.tool, language = excluded.language, code = excluded.code,
  message = excluded.message, template = excluded.template, file = excluded.file,
  raw = excluded.raw, last_seen = excluded.last_seen, count = errors.count + 1
RETURNING id`,
			e.Workspace, e.Fingerprint, e.Tool, e.Language, e.Code, e.Message, e.Template, e.File, e.Raw, now, now).Scan(&id)
		if err != nil {
			return err
		}
		// Re-indexing replaces the whole document, so carry the existing
		// root cause over instead of dropping it.
		rootCause, err = latestRootCause(ctx, tx, id)
		if err != nil {
			return err
		}
		return h.queueTx(ctx, tx, docOp(id, e, rootCause))
	})
	if err != nil {
		return 0, fmt.Errorf("record error: %w", err)
	}
	h.apply(ctx)
	return id, nil
}

func latestRootCause(ctx context.Context, tx *sql.Tx, errorID int64) (string, error) {
	var rc string
	err := tx.QueryRowContext(ctx, `SELECT root_cause FROM explanations WHERE error_id = ?
ORDER BY created_at DESC, id DESC LIMIT 1`, errorID).Scan(&rc)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return rc, err
}

// docOp is the index change that mirrors error id.
func docOp(id int64, e ErrorRecord, rootCause string) op {
	return op{id: errDocID(id), fields: map[string]string{
		"template":   e.Template,
		"message":    e.Message,
		"code":       e.Code,
		"language":   e.Language,
		"tool":       e.Tool,
		"root_cause": rootCause,
		docKindField: docKindValue,
	}}
}

// queueTx queues index changes in the transaction that makes the sqlite
// change they mirror, so a crash between the commit and the index write
// loses nothing: whoever opens the index next applies them.
func (h *LocalHistory) queueTx(ctx context.Context, tx *sql.Tx, ops ...op) error {
	if h.x == nil {
		return nil
	}
	return enqueueTx(ctx, tx, ops)
}

// apply writes the queued changes to the index now if it can. The changes
// are safe in the queue either way, so failing here is only logged: a busy
// index is applied by its holder, a broken one rebuilt from sqlite.
func (h *LocalHistory) apply(ctx context.Context) {
	if h.x == nil {
		return
	}
	err := h.x.TryFlush(ctx)
	if err != nil {
		// Whatever kept it from the index, the next lookup tries again.
		h.x.ownQueued.Add(1)
	}
	if err != nil && !errors.Is(err, ErrBusy) {
		h.log.Warn("search index not updated yet; the change is queued", "error", err)
	}
}

func errDocID(id int64) string { return errDocPrefix + strconv.FormatInt(id, 10) }

// parseDocID returns the error id of a history document ID.
func parseDocID(s string) (int64, bool) {
	rest, ok := strings.CutPrefix(s, errDocPrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil
}

// Explain stores an explanation of the error errorID and re-indexes the
// error so that its root cause becomes searchable. A zero CreatedAt means
// now.
func (h *LocalHistory) Explain(ctx context.Context, errorID int64, ex Explanation) error {
	if ex.Feedback < -1 || ex.Feedback > 1 {
		return fmt.Errorf("explain error %d: feedback %d not in -1..1", errorID, ex.Feedback)
	}
	if ex.CreatedAt.IsZero() {
		ex.CreatedAt = h.now()
	}
	steps := ex.Steps
	if steps == nil {
		// "[]" rather than "null", so readers always get an array.
		steps = []string{}
	}
	stepsJSON, err := json.Marshal(steps)
	if err != nil {
		return fmt.Errorf("explain error %d: encode steps: %w", errorID, err)
	}
	var e ErrorRecord
	err = h.st.Write(ctx, func(tx *sql.Tx) error {
		// Checked first so an unknown id gets a clear message instead of
		// a foreign key failure.
		if err := tx.QueryRowContext(ctx, `SELECT template, message, code, language, tool FROM errors WHERE id = ?`, errorID).
			Scan(&e.Template, &e.Message, &e.Code, &e.Language, &e.Tool); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return errors.New("no such error")
			}
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO explanations
  (error_id, root_cause, steps, confidence, source, model, created_at, feedback, content_hash, message, msg_hash)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			errorID, ex.RootCause, string(stepsJSON), ex.Confidence, ex.Source, ex.Model,
			ex.CreatedAt.UnixMilli(), ex.Feedback, ex.ContentHash, ex.Message, ex.MessageHash)
		if err != nil {
			return err
		}
		return h.queueTx(ctx, tx, docOp(errorID, e, ex.RootCause))
	})
	if err != nil {
		return fmt.Errorf("explain error %d: %w", errorID, err)
	}
	h.apply(ctx)
	return nil
}

// Cached returns the latest explanation of the error with this fingerprint
// that was given for the same error (messageHash, see
// Explanation.MessageHash) in the same file content (contentHash) and is
// younger than maxAge (maxAge <= 0: any age). The fingerprint alone names
// a kind of error ("No module named <id>"): an explanation of another
// error of the kind, or one stored without a message hash, is not served.
// Explanations the user voted down are never served again: the point of
// asking is to get a better one.
func (h *LocalHistory) Cached(ctx context.Context, workspace, fingerprint, contentHash, messageHash string, maxAge time.Duration) (*Explanation, bool, error) {
	if messageHash == "" {
		return nil, false, nil
	}
	since := int64(0)
	if maxAge > 0 {
		since = h.now().Add(-maxAge).UnixMilli()
	}
	row := h.st.Reader().QueryRowContext(ctx, `SELECT x.error_id, `+explanationCols+`
FROM explanations x JOIN errors e ON e.id = x.error_id
WHERE e.workspace = ? AND e.fingerprint = ? AND x.content_hash = ? AND x.msg_hash = ? AND x.created_at >= ? AND x.feedback >= 0
ORDER BY x.created_at DESC, x.id DESC LIMIT 1`, workspace, fingerprint, contentHash, messageHash, since)
	_, ex, err := scanExplanation(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read cached explanation: %w", h.st.Fault(err))
	}
	return ex, true, nil
}

// explanationCols are the columns scanExplanation reads, after error_id.
const explanationCols = `x.root_cause, x.steps, x.confidence, x.source, x.model, x.content_hash, x.message, x.msg_hash, x.created_at, x.feedback`

type scanner interface{ Scan(dest ...any) error }

func scanExplanation(r scanner) (int64, *Explanation, error) {
	var (
		errorID int64
		ex      Explanation
		steps   string
		created int64
	)
	if err := r.Scan(&errorID, &ex.RootCause, &steps, &ex.Confidence, &ex.Source, &ex.Model,
		&ex.ContentHash, &ex.Message, &ex.MessageHash, &created, &ex.Feedback); err != nil {
		return 0, nil, err
	}
	if err := json.Unmarshal([]byte(steps), &ex.Steps); err != nil {
		return 0, nil, fmt.Errorf("decode steps of error %d: %w", errorID, err)
	}
	ex.CreatedAt = time.UnixMilli(created)
	return errorID, &ex, nil
}

// Similar returns up to k (k <= 0: 5) remembered errors like e in workspace
// ("" = every workspace), each with its latest explanation: first the exact
// fingerprint matches (Score 1, Exact), with the latest explanation given
// for this very error (e.MessageHash, else e.Message) when there is one:
// another error of the same kind may have been explained since; then errors whose template, message or code match
// e's in the search index, best first. If the index is busy
// or fails (even once rebuilt, see Search), the exact matches alone are
// returned: an answer now beats a better one later.
func (h *LocalHistory) Similar(ctx context.Context, workspace string, e ErrorRecord, k int) ([]HistoryEntry, error) {
	if k <= 0 {
		k = 5
	}
	q := exactSelect + ` WHERE e.fingerprint = ?`
	args := []any{e.MessageHash, e.MessageHash, e.Message, e.Fingerprint}
	if workspace != "" {
		q += ` AND e.workspace = ?`
		args = append(args, workspace)
	}
	q += ` ORDER BY e.last_seen DESC, e.id DESC LIMIT ?`
	args = append(args, k)
	out, err := h.queryEntries(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("similar errors: %w", h.st.Fault(err))
	}
	for i := range out {
		out[i].Score, out[i].Exact = 1, true
	}
	if len(out) >= k || h.x == nil {
		return out, nil
	}

	text := strings.Join(nonEmpty(e.Template, e.Message, e.Code), " ")
	seen := make(map[int64]bool, len(out))
	for _, en := range out {
		seen[en.ErrorID] = true
	}
	// Over-fetch: hits from other workspaces and the exact matches are
	// dropped; more are fetched while other workspaces' errors crowd
	// this one's out.
	var more []HistoryEntry
	for fetch := 4*k + len(out); ; fetch *= 4 {
		hits, err := h.similar(ctx, workspace, e.Template, text, fetch)
		if errors.Is(err, ErrBusy) {
			return out, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("similar errors: %w", err)
			}
			// The exact matches are known without the index.
			h.log.Warn("similar errors found by fingerprint only: the search index failed", "error", err)
			return out, nil
		}
		if more, err = h.hitEntries(ctx, hits, workspace, seen, k-len(out)); err != nil {
			return nil, fmt.Errorf("similar errors: %w", err)
		}
		if len(more) >= k-len(out) || len(hits) < fetch || workspace == "" || fetch >= maxOverFetch {
			break
		}
	}
	return append(out, more...), nil
}

// maxOverFetch bounds the hits read to find a workspace's errors among
// other workspaces' in the shared index.
const maxOverFetch = 4096

// Search finds remembered errors of workspace ("" = every workspace, for
// `kodyls history search`) whose text or explanation matches query, best
// first. Unlike Similar it fails with ErrBusy when the index is busy,
// because a partial answer would look like "no matches".
func (h *LocalHistory) Search(ctx context.Context, workspace, text string, k int) ([]HistoryEntry, error) {
	if k <= 0 {
		k = 10
	}
	if h.x == nil {
		return nil, errors.New("search history: no search index")
	}
	fetch := k
	if workspace != "" {
		fetch = 4 * k // over-fetch: hits of other workspaces are dropped below
	}
	for ; ; fetch *= 4 {
		hits, err := h.search(ctx, text, searchFields, fetch)
		if err != nil {
			return nil, fmt.Errorf("search history: %w", h.st.Fault(err))
		}
		out, err := h.hitEntries(ctx, hits, workspace, nil, k)
		if err != nil {
			return nil, fmt.Errorf("search history: %w", h.st.Fault(err))
		}
		// More while other workspaces' errors crowd this one's out.
		if len(out) >= k || len(hits) < fetch || workspace == "" || fetch >= maxOverFetch {
			return out, nil
		}
	}
}

// search runs a match query for text over fields, restricted to history
// documents. text is analysed, never parsed, so compiler output is safe.
func (h *LocalHistory) search(ctx context.Context, text string, fields []string, k int) ([]Hit, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	ors := make([]query.Query, len(fields))
	for i, f := range fields {
		m := bleve.NewMatchQuery(text)
		m.SetField(f)
		ors[i] = m
	}
	kind := bleve.NewTermQuery(docKindValue)
	kind.SetField(docKindField)
	q := bleve.NewConjunctionQuery(kind, bleve.NewDisjunctionQuery(ors...))
	var hits []Hit
	err := h.x.with(ctx, func(idx bleve.Index) error {
		hits = nil // a second run, on a rebuilt index, starts over
		res, err := idx.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, k, 0, false))
		if err != nil {
			return err
		}
		for _, hit := range res.Hits {
			hits = append(hits, Hit{ID: hit.ID, Score: hit.Score})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return hits, nil
}

// hitEntries turns search hits into entries in hit order, skipping ids in
// skip, errors outside workspace (unless it is "") and documents whose
// error no longer exists (a delete still in the queue), up to k.
func (h *LocalHistory) hitEntries(ctx context.Context, hits []Hit, workspace string, skip map[int64]bool, k int) ([]HistoryEntry, error) {
	var ids []int64
	score := map[int64]float64{}
	for _, hit := range hits {
		id, ok := parseDocID(hit.ID)
		if !ok || skip[id] {
			continue
		}
		if _, dup := score[id]; dup {
			continue
		}
		ids = append(ids, id)
		score[id] = hit.Score
	}
	// Which of the hits are errors in workspace is asked first, by id
	// alone; only the k that are returned are read in full.
	q := `SELECT id FROM errors WHERE id IN (SELECT value FROM json_each(?))`
	args := []any{idList(ids)}
	if workspace != "" {
		q += ` AND +workspace = ?`
		args = append(args, workspace)
	}
	existing, err := h.queryIDs(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read errors: %w", err)
	}
	in := make(map[int64]bool, len(existing))
	for _, id := range existing {
		in[id] = true
	}
	picked := make([]int64, 0, k)
	for _, id := range ids {
		if in[id] {
			picked = append(picked, id)
			if len(picked) == k {
				break
			}
		}
	}
	out, err := h.entries(ctx, picked, workspace)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Score = score[out[i].ErrorID]
	}
	return out, nil
}

func (h *LocalHistory) queryIDs(ctx context.Context, q string, args ...any) ([]int64, error) {
	stmt, err := h.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// entrySelect reads an error with its latest explanation, if any, as
// scanEntry scans it. The latest explanation is found through the
// explanations_error index, newest first, ties to the last written.
const entrySelect = entryCols + `
FROM errors e LEFT JOIN explanations x ON x.id = (
  SELECT y.id FROM explanations y WHERE y.error_id = e.id ORDER BY y.created_at DESC, y.id DESC LIMIT 1)`

// exactSelect is entrySelect preferring the latest explanation given for
// the error of its first parameters: its message hash (twice; "" matches
// none), then its message.
const exactSelect = entryCols + `
FROM errors e LEFT JOIN explanations x ON x.id = (
  SELECT y.id FROM explanations y WHERE y.error_id = e.id
  ORDER BY (? <> '' AND y.msg_hash = ?) DESC, y.message = ? DESC, y.created_at DESC, y.id DESC LIMIT 1)`

const entryCols = `SELECT e.id, e.workspace, e.fingerprint, e.tool, e.language, e.code, e.message, e.template, e.file, e.raw,
  e.first_seen, e.last_seen, e.count,
  x.root_cause, x.steps, x.confidence, x.source, x.model, x.content_hash, x.message, x.msg_hash, x.created_at, x.feedback`

// entries loads the errors with these ids (in workspace, unless it is "")
// and their latest explanations, in the order of ids.
func (h *LocalHistory) entries(ctx context.Context, ids []int64, workspace string) ([]HistoryEntry, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	q := entrySelect + ` WHERE e.id IN (SELECT value FROM json_each(?))`
	args := []any{idList(ids)}
	if workspace != "" {
		// The unary + keeps sqlite from using the (workspace, fingerprint)
		// index, which would scan the whole workspace, rather than look
		// the few ids up by rowid.
		q += ` AND +e.workspace = ?`
		args = append(args, workspace)
	}
	found, err := h.queryEntries(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]int, len(found))
	for i, en := range found {
		byID[en.ErrorID] = i
	}
	out := make([]HistoryEntry, 0, len(found))
	for _, id := range ids {
		if i, ok := byID[id]; ok {
			out = append(out, found[i])
		}
	}
	return out, nil
}

// idList is ids as a JSON array, for json_each: a statement with a list
// in one parameter is the same for any number of ids, so it is prepared
// once.
func idList(ids []int64) string {
	list := make([]byte, 0, 8*len(ids))
	list = append(list, '[')
	for i, id := range ids {
		if i > 0 {
			list = append(list, ',')
		}
		list = strconv.AppendInt(list, id, 10)
	}
	return string(append(list, ']'))
}

// queryEntries runs q, an entrySelect with its conditions, through a
// prepared statement.
func (h *LocalHistory) queryEntries(ctx context.Context, q string, args ...any) ([]HistoryEntry, error) {
	stmt, err := h.stmt(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read errors: %w", err)
	}
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("read errors: %w", err)
	}
	defer rows.Close()
	var out []HistoryEntry
	for rows.Next() {
		en, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("read errors: %w", err)
		}
		out = append(out, en)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read errors: %w", err)
	}
	return out, nil
}

// scanEntry scans a row of entrySelect.
func scanEntry(r scanner) (HistoryEntry, error) {
	var (
		en                   HistoryEntry
		first, last          int64
		rootCause, steps     sql.NullString
		source, model, chash sql.NullString
		xmsg, xhash          sql.NullString
		confidence           sql.NullFloat64
		created, feedback    sql.NullInt64
	)
	if err := r.Scan(&en.ErrorID, &en.Workspace, &en.Fingerprint, &en.Tool, &en.Language, &en.Code,
		&en.Message, &en.Template, &en.File, &en.Raw, &first, &last, &en.Count,
		&rootCause, &steps, &confidence, &source, &model, &chash, &xmsg, &xhash, &created, &feedback); err != nil {
		return HistoryEntry{}, err
	}
	en.FirstSeen, en.LastSeen = time.UnixMilli(first), time.UnixMilli(last)
	if created.Valid {
		ex := &Explanation{RootCause: rootCause.String, Confidence: confidence.Float64, Source: source.String,
			Model: model.String, ContentHash: chash.String, Message: xmsg.String, MessageHash: xhash.String,
			CreatedAt: time.UnixMilli(created.Int64), Feedback: int(feedback.Int64)}
		if err := json.Unmarshal([]byte(steps.String), &ex.Steps); err != nil {
			return HistoryEntry{}, fmt.Errorf("decode steps of error %d: %w", en.ErrorID, err)
		}
		en.Latest = ex
	}
	return en, nil
}

// stmt returns q prepared on the read pool, preparing it the first time.
// A lookup runs a handful of statements; parsing them anew each time
// cost more than running them.
func (h *LocalHistory) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	h.stmtMu.Lock()
	defer h.stmtMu.Unlock()
	if st, ok := h.stmts[q]; ok {
		return st, nil
	}
	st, err := h.st.Reader().PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if h.stmts == nil {
		h.stmts = map[string]*sql.Stmt{}
	}
	h.stmts[q] = st
	return st, nil
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// Stats summarises the history.
type Stats struct {
	Errors       int            // distinct errors
	Occurrences  int            // sum of their counts
	Explanations int            // explanations stored
	ByTool       map[string]int // distinct errors per tool
	BySource     map[string]int // explanations per source
}

// IndexStatus describes the search index of the history.
type IndexStatus struct {
	Path      string // the bleve index directory
	Documents uint64 // errors indexed
	Queued    int    // changes waiting to reach the index
	// Repaired is why the index was found damaged and rebuilt from the
	// history database while it was checked ("" = it was not).
	Repaired string
}

// errNoIndex: the history was opened without its search index.
var errNoIndex = errors.New("the history has no search index")

// Index applies the queued changes to the search index, runs a search and
// reports what it holds: the same way into the index every lookup takes,
// so a deleted or damaged index is rebuilt from the history first.
func (h *LocalHistory) Index(ctx context.Context) (st IndexStatus, err error) {
	if h.x == nil {
		return IndexStatus{}, errNoIndex
	}
	st.Path = h.x.Path()
	defer func() {
		if h.x.repaired != nil {
			st.Repaired = h.x.repaired.Error()
		}
	}()
	if st.Documents, err = h.x.Count(ctx); err != nil {
		return st, err
	}
	// A search reads the postings, which counting does not.
	if _, err := h.search(ctx, "error undefined type", searchFields, 1); err != nil {
		return st, err
	}
	if st.Queued, err = h.x.Pending(ctx); err != nil {
		return st, err
	}
	return st, nil
}

// Stats counts the history over all workspaces.
func (h *LocalHistory) Stats(ctx context.Context) (Stats, error) {
	s := Stats{ByTool: map[string]int{}, BySource: map[string]int{}}
	r := h.st.Reader()
	if err := r.QueryRowContext(ctx, `SELECT count(*), COALESCE(SUM(count), 0) FROM errors`).Scan(&s.Errors, &s.Occurrences); err != nil {
		return Stats{}, fmt.Errorf("history stats: %w", h.st.Fault(err))
	}
	if err := r.QueryRowContext(ctx, `SELECT count(*) FROM explanations`).Scan(&s.Explanations); err != nil {
		return Stats{}, fmt.Errorf("history stats: %w", h.st.Fault(err))
	}
	if err := groupCount(ctx, r, `SELECT tool, count(*) FROM errors GROUP BY tool`, s.ByTool); err != nil {
		return Stats{}, fmt.Errorf("history stats: %w", h.st.Fault(err))
	}
	if err := groupCount(ctx, r, `SELECT source, count(*) FROM explanations GROUP BY source`, s.BySource); err != nil {
		return Stats{}, fmt.Errorf("history stats: %w", h.st.Fault(err))
	}
	return s, nil
}

func groupCount(ctx context.Context, db *sql.DB, q string, into map[string]int) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return err
		}
		into[k] = n
	}
	return rows.Err()
}

// Forget deletes the errors of workspace ("" = all workspaces) with their
// explanations and search documents, and returns how many errors it deleted.
// The store overwrites deleted rows (secure_delete), and Forget then
// checkpoints the write-ahead log and merges the search index, so that
// their text is gone from the files too, not only from the tables and
// the searches.
func (h *LocalHistory) Forget(ctx context.Context, workspace string) (int, error) {
	q := `SELECT id FROM errors`
	var args []any
	if workspace != "" {
		q += ` WHERE workspace = ?`
		args = append(args, workspace)
	}
	n, err := h.deleteSelected(ctx, q, args...)
	if err != nil {
		return n, fmt.Errorf("forget history: %w", err)
	}
	if n > 0 {
		if ok, err := h.st.Checkpoint(ctx); err != nil || !ok {
			// The rows are deleted all the same; the log is emptied by
			// the next checkpoint.
			h.log.Warn("the write-ahead log still holds the forgotten errors until the next checkpoint", "error", err)
		}
		if h.x != nil {
			if err := h.x.Compact(ctx); err != nil {
				// They are found by no search; their text goes with the
				// index's next merge.
				h.log.Warn("the search index still holds the text of the forgotten errors until its segments are merged", "error", err)
			}
		}
	}
	return n, nil
}

// Prune keeps the maxErrors most recently seen errors and deletes the rest,
// returning how many it deleted. It prunes the agents' checkpoints too
// (see [Checkpoints.Prune]). maxErrors must be positive: a zero from an
// unset option must not wipe the history; Forget does that on purpose.
func (h *LocalHistory) Prune(ctx context.Context, maxErrors int) (int, error) {
	if maxErrors <= 0 {
		return 0, fmt.Errorf("prune history: max errors must be positive, got %d", maxErrors)
	}
	n, err := h.deleteSelected(ctx, `SELECT id FROM errors ORDER BY last_seen DESC, id DESC LIMIT -1 OFFSET ?`, maxErrors)
	if err != nil {
		return n, fmt.Errorf("prune history: %w", err)
	}
	// The agents' checkpoints are the explanations in progress: they live
	// as long as the history keeps errors, and no longer than CheckpointAge.
	if _, err := h.st.Checkpoints().Prune(ctx, maxErrors, CheckpointAge); err != nil {
		return n, fmt.Errorf("prune history: %w", err)
	}
	return n, nil
}

// deleteSelected deletes the errors whose ids q selects (explanations go
// with them through ON DELETE CASCADE), then their search documents. The
// selection runs inside the write transaction so it cannot race a Record
// from another process. The deletes of their documents are queued in the
// same transaction and applied after the commit; entries() ignores
// documents whose row is gone, so a stale document is never shown meanwhile.
func (h *LocalHistory) deleteSelected(ctx context.Context, q string, args ...any) (int, error) {
	var ids []int64
	err := h.st.Write(ctx, func(tx *sql.Tx) error {
		ids = ids[:0]
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, `DELETE FROM errors WHERE id = ?`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		dels := make([]op, len(ids))
		for i, id := range ids {
			if _, err := stmt.ExecContext(ctx, id); err != nil {
				return err
			}
			dels[i] = op{id: errDocID(id), delete: true}
		}
		return h.queueTx(ctx, tx, dels...)
	})
	if err != nil {
		return 0, err
	}
	if len(ids) > 0 {
		h.apply(ctx)
	}
	return len(ids), nil
}
