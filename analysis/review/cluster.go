package review

import (
	"context"
	"fmt"
	"slices"

	"github.com/kodustech/kodyls/agents/llm"
	"github.com/kodustech/kodyls/analysis/kodusconfig"
	"github.com/kodustech/kodyls/prompts"
)

// clusterReply is the answer of review_cluster.
type clusterReply struct {
	Clusters []struct {
		Primary            int    `json:"primary"`
		Duplicates         []int  `json:"duplicates"`
		ProblemDescription string `json:"problemDescription,omitempty"`
		ActionStatement    string `json:"actionStatement,omitempty"`
	} `json:"clusters"`
}

// Cluster groups suggestions that report the same problem, usually in
// several files, so that the editor can show one finding that lists every
// place. In each group the most severe suggestion (of those equally
// severe, the one reviewed first: lowest position across results, files
// in the order given) is the primary and gets Duplicates;
// the others stay in their files with DuplicateOf set to the primary's ID,
// so nothing disappears from the file it is in.
//
// Clustering is a convenience: when it fails, the results come back as
// they were, with the failure noted in each result's Degraded. It is
// skipped when suggestionControl.groupingMode is not "full" (Kodus' "show
// repeated suggestions as one comment"), and Kody Rules suggestions are
// left out, since each names its own rule. The results passed in are not
// modified.
func (p *Pipeline) Cluster(ctx context.Context, results []FileResult) []FileResult {
	out := cloneResults(results)
	if p.g == nil || ctx.Err() != nil || p.cfg.SuggestionControl.GroupingMode != kodusconfig.GroupingFull {
		return out
	}
	type ref struct{ file, idx int }
	var refs []ref
	var list []prompts.Suggestion
	for fi, res := range out {
		for si, s := range res.Suggestions {
			if s.Label == LabelKodyRules {
				continue
			}
			refs = append(refs, ref{fi, si})
			list = append(list, toPrompt(s))
		}
	}
	if len(refs) < 2 {
		return out
	}
	fail := func(err error) []FileResult {
		res := cloneResults(results)
		for i := range res {
			if len(res[i].Suggestions) > 0 {
				res[i].Degraded = append(res[i].Degraded, fmt.Sprintf("%s: %v; repeated suggestions are shown separately", StageCluster, err))
			}
		}
		p.log.Warn("review stage degraded", "stage", StageCluster, "files", len(results), "err", err)
		return res
	}
	msg, err := p.prompts.Render("review_cluster", prompts.ClusterData{Suggestions: list, ResponseLanguage: p.lang})
	if err != nil {
		return fail(err)
	}
	model := p.g.Model(llm.TaskCheap)
	if n, limit := llm.CountTokens(model, msg.Text), int(float64(p.g.ContextWindow(model))*contextShare); n > limit {
		// The endpoint would refuse the prompt; saying so is cheaper
		// than a failed call, and the suggestions are all still there.
		return fail(fmt.Errorf("%d suggestions need about %d tokens, more than %d of the model's context window", len(refs), n, limit))
	}
	reply, failed, err := ask[clusterReply](ctx, p, llm.TaskCheap, SchemaCluster, map[string][]any{
		"clusters.primary":    indexes(len(refs)),
		"clusters.duplicates": indexes(len(refs)),
	}, msg)
	if err != nil {
		return cloneResults(results) // the caller gave up; nothing to note
	}
	if failed != nil {
		return fail(failed)
	}

	// The answer is applied afresh: links from an earlier clustering
	// would otherwise point at primaries that are no longer ones.
	for fi := range out {
		for si := range out[fi].Suggestions {
			out[fi].Suggestions[si].Duplicates = nil
			out[fi].Suggestions[si].DuplicateOf = ""
		}
	}
	claimed := make([]bool, len(refs)+1)
	for _, c := range reply.Clusters {
		var members []int
		for _, n := range append([]int{c.Primary}, c.Duplicates...) {
			if n >= 1 && n <= len(refs) && !claimed[n] && !slices.Contains(members, n) {
				members = append(members, n)
			}
		}
		if len(members) < 2 {
			continue
		}
		// The primary is the most severe member, the one reviewed first
		// among equals: the others are shown as its repeats and counted
		// through it, so a critical finding never hides behind a low
		// one. Choosing here keeps the result independent of how the
		// model ordered its answer.
		slices.Sort(members)
		for _, n := range members {
			claimed[n] = true
		}
		rank := func(n int) int {
			r := refs[n-1]
			return kodusconfig.SeverityRank(out[r.file].Suggestions[r.idx].Severity)
		}
		top := 0
		for i, n := range members {
			if rank(n) > rank(members[top]) {
				top = i
			}
		}
		members[0], members[top] = members[top], members[0]
		slices.Sort(members[1:])
		pr := refs[members[0]-1]
		primary := &out[pr.file].Suggestions[pr.idx]
		for _, n := range members[1:] {
			d := refs[n-1]
			dup := &out[d.file].Suggestions[d.idx]
			dup.DuplicateOf = primary.ID
			primary.Duplicates = append(primary.Duplicates, DuplicateRef{
				ID: dup.ID, File: dup.RelevantFile, LinesStart: dup.RelevantLinesStart, LinesEnd: dup.RelevantLinesEnd,
			})
		}
	}
	return out
}

// cloneResults copies results deeply enough that changing a suggestion of
// the copy leaves the original alone.
func cloneResults(results []FileResult) []FileResult {
	out := make([]FileResult, len(results))
	for i, r := range results {
		r.Suggestions = slices.Clone(r.Suggestions)
		for j := range r.Suggestions {
			r.Suggestions[j].Duplicates = slices.Clone(r.Suggestions[j].Duplicates)
		}
		r.Discarded = slices.Clone(r.Discarded)
		r.Degraded = slices.Clone(r.Degraded)
		out[i] = r
	}
	return out
}
