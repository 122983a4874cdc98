package filereview

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The canonical pull-request cases: a workspace after a change, the files
// the change touched (with their text before it), and one pull-request
// scope rule whose verdict depends on files the diff does not show. A case
// passes when the check reports the violation on the file that breaks the
// rule, or, when the change keeps the rule, reports none.

// PullRequestRule is the rule of a pull-request case.
type PullRequestRule struct {
	UUID         string   `json:"uuid"`
	Title        string   `json:"title"`
	Severity     string   `json:"severity"`
	Paths        []string `json:"paths"`
	Instructions string   `json:"instructions"`
}

// PullRequestCase is one canonical change set.
type PullRequestCase struct {
	Name     string          `json:"name"`
	Language string          `json:"language"`
	Rule     PullRequestRule `json:"rule"`
	// Files is the workspace after the change.
	Files map[string]string `json:"files"`
	// Changed maps each changed file to its text before the change (""
	// for a new file).
	Changed map[string]string `json:"changed"`
	// Violation is the file the violation must be reported on; "" when
	// the change keeps the rule and nothing may be reported.
	Violation string `json:"violation,omitempty"`
}

// The properties a pull-request case expects.
const (
	PropertyChecked     = "the change set is checked against the rule"
	PropertyViolation   = "a violation of the rule on the file that breaks it"
	PropertyNoViolation = "no violation where the change keeps the rule"
)

// PullRequestEvalCases returns the embedded canonical pull-request cases.
func PullRequestEvalCases() ([]PullRequestCase, error) {
	raw, err := evalFS.ReadFile("evalcases/pullrequest.json")
	if err != nil {
		return nil, err
	}
	var cases []PullRequestCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		return nil, fmt.Errorf("pull-request eval cases: %w", err)
	}
	return cases, nil
}

// ruleFile renders the case's rule as a Kody Rule file.
func (c PullRequestCase) ruleFile() string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\ntitle: %q\nuuid: %s\nseverity: %s\nscope: pull_request\n", c.Rule.Title, c.Rule.UUID, c.Rule.Severity)
	if len(c.Rule.Paths) > 0 {
		q := make([]string, len(c.Rule.Paths))
		for i, p := range c.Rule.Paths {
			q[i] = fmt.Sprintf("%q", p)
		}
		fmt.Fprintf(&b, "path: [%s]\n", strings.Join(q, ", "))
	}
	fmt.Fprintf(&b, "---\n## Instructions\n\n%s\n", c.Rule.Instructions)
	return b.String()
}

// EvalPullRequest writes each case's workspace, with its rule under
// .kody/rules, into a directory of its own under dir and has check judge
// the change set there.
func EvalPullRequest(ctx context.Context, dir string, check func(ctx context.Context, root string, inputs []Input) (map[string][]Finding, error), cases []PullRequestCase) EvalReport {
	rep := EvalReport{Results: []EvalResult{}}
	for _, c := range cases {
		if ctx.Err() != nil {
			break
		}
		res := EvalResult{Name: c.Name, Language: c.Language}
		root := filepath.Join(dir, c.Name)
		inputs, err := c.write(root)
		if err != nil {
			res.Property, res.Reason = PropertyChecked, err.Error()
		} else {
			var stages stageCounter
			start := time.Now()
			byFile, err := check(stages.context(ctx), root, inputs)
			res.Latency = time.Since(start)
			res.Steps = stages.count()
			for _, fs := range byFile {
				res.Findings += len(fs)
			}
			if err != nil {
				res.Property, res.Reason = PropertyChecked, err.Error()
			} else {
				res.Pass, res.Property, res.Reason = c.judge(byFile)
			}
		}
		if res.Pass {
			rep.Passed++
		}
		rep.Total++
		rep.Results = append(rep.Results, res)
	}
	return rep
}

// write lays out the case's workspace and returns its change set.
func (c PullRequestCase) write(root string) ([]Input, error) {
	files := map[string]string{".kody/rules/" + c.Name + ".md": c.ruleFile()}
	for rel, text := range c.Files {
		files[rel] = text
	}
	for rel, text := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	var inputs []Input
	for rel, before := range c.Changed {
		after, ok := c.Files[rel]
		if !ok {
			return nil, fmt.Errorf("pull-request case %s: changed file %s is not in its files", c.Name, rel)
		}
		inputs = append(inputs, Input{Path: rel, Language: c.Language, Base: before, Current: after})
	}
	slices.SortFunc(inputs, func(a, b Input) int { return strings.Compare(a.Path, b.Path) })
	return inputs, nil
}

func (c PullRequestCase) judge(byFile map[string][]Finding) (bool, string, string) {
	var where []string
	for path, fs := range byFile {
		for _, f := range fs {
			where = append(where, fmt.Sprintf("%s:%d (%s)", path, f.Span.StartLine+1, f.OneSentenceSummary))
		}
	}
	slices.Sort(where)
	if c.Violation == "" {
		if len(where) > 0 {
			return false, PropertyNoViolation, "reported " + strings.Join(where, "; ")
		}
		return true, "", ""
	}
	for _, f := range byFile[c.Violation] {
		if f.RuleID == c.Rule.UUID {
			return true, "", ""
		}
	}
	if len(where) == 0 {
		return false, PropertyViolation, "no violation reported on " + c.Violation
	}
	return false, PropertyViolation, "nothing on " + c.Violation + " from the rule; reported " + strings.Join(where, "; ")
}
