package planmode_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/kodustech/kodyls/agents/planmode"
)

func basePlan() planmode.Plan {
	return planmode.Plan{ID: "p", Version: 1, Status: planmode.PlanFailed, Goal: "g", Steps: []planmode.Step{
		{ID: "read", Tool: "read_file", Input: json.RawMessage(`{"path":"a.go"}`), Status: planmode.StepDone, Result: "code", Attempts: 1},
		{ID: "edit", Tool: "edit", Input: json.RawMessage(`{"n":1}`), DependsOn: []string{"read"}, Status: planmode.StepDone, Result: "edited", Attempts: 1},
		{ID: "verify", Tool: "verify", DependsOn: []string{"edit"}, Status: planmode.StepFailed, Result: "still broken", Attempts: 1},
	}}
}

func statuses(p planmode.Plan) string {
	var parts []string
	for _, s := range p.Steps {
		parts = append(parts, s.ID+"="+string(s.Status))
	}
	return strings.Join(parts, " ")
}

func TestAdjustEachType(t *testing.T) {
	newStep := &planmode.Step{ID: "search", Tool: "search", Input: json.RawMessage(`{"q":"x"}`)}
	cases := []struct {
		name  string
		adj   planmode.Adjustment
		want  string // step statuses after
		check func(t *testing.T, p planmode.Plan)
	}{
		{"modify reruns the step and its dependents", planmode.Adjustment{Type: planmode.AdjustModify, StepID: "edit", Input: json.RawMessage(`{"n":2}`)},
			"read=done edit=pending verify=pending", func(t *testing.T, p planmode.Plan) {
				if s, _ := p.Step("edit"); string(s.Input) != `{"n":2}` || s.Attempts != 1 {
					t.Errorf("edit %+v", s)
				}
			}},
		{"retry keeps the input", planmode.Adjustment{Type: planmode.AdjustRetry, StepID: "verify"},
			"read=done edit=done verify=pending", nil},
		{"skip", planmode.Adjustment{Type: planmode.AdjustSkip, StepID: "verify", Reason: "no build"},
			"read=done edit=done verify=skipped", nil},
		{"add before makes the target wait for the new step", planmode.Adjustment{Type: planmode.AdjustAddBefore, StepID: "edit", Step: newStep},
			"read=done search=pending edit=pending verify=pending", func(t *testing.T, p planmode.Plan) {
				if s, _ := p.Step("edit"); !reflect.DeepEqual(s.DependsOn, []string{"read", "search"}) {
					t.Errorf("edit depends on %v", s.DependsOn)
				}
			}},
		{"add after depends on the target", planmode.Adjustment{Type: planmode.AdjustAddAfter, StepID: "read", Step: newStep},
			"read=done search=pending edit=done verify=failed", func(t *testing.T, p planmode.Plan) {
				if s, _ := p.Step("search"); !reflect.DeepEqual(s.DependsOn, []string{"read"}) {
					t.Errorf("search depends on %v", s.DependsOn)
				}
			}},
		{"replace takes the place and the dependents", planmode.Adjustment{Type: planmode.AdjustReplace, StepID: "edit", Step: &planmode.Step{ID: "edit2", Tool: "edit", Input: json.RawMessage(`{"n":3}`)}},
			"read=done edit2=pending verify=pending", func(t *testing.T, p planmode.Plan) {
				if s, _ := p.Step("verify"); !reflect.DeepEqual(s.DependsOn, []string{"edit2"}) {
					t.Errorf("verify depends on %v", s.DependsOn)
				}
				if s, _ := p.Step("edit2"); !reflect.DeepEqual(s.DependsOn, []string{"read"}) {
					t.Errorf("edit2 depends on %v", s.DependsOn)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := basePlan()
			before, _ := json.Marshal(old)
			p, err := planmode.Adjust(old, []planmode.Adjustment{c.adj}, "because")
			if err != nil {
				t.Fatal(err)
			}
			if got := statuses(p); got != c.want {
				t.Errorf("steps %s, want %s", got, c.want)
			}
			if p.Version != 2 || p.Status != planmode.PlanAdjusted || p.Reason != "because" {
				t.Errorf("version %d status %s reason %q", p.Version, p.Status, p.Reason)
			}
			if after, _ := json.Marshal(old); string(after) != string(before) {
				t.Errorf("the old version changed:\n%s\n%s", before, after)
			}
			if c.check != nil {
				c.check(t, p)
			}
		})
	}
}

func TestAdjustRejectsABadSetWhole(t *testing.T) {
	old := basePlan()
	for _, adjs := range [][]planmode.Adjustment{
		{{Type: planmode.AdjustSkip, StepID: "read"}, {Type: planmode.AdjustRetry, StepID: "nope"}},
		{{Type: planmode.AdjustModify, StepID: "edit"}},
		{{Type: "DELETE", StepID: "edit"}},
		{{Type: planmode.AdjustAddBefore, StepID: "read", Step: &planmode.Step{ID: "x", DependsOn: []string{"verify"}}}},
		{{Type: planmode.AdjustAddAfter, StepID: "read", Step: &planmode.Step{ID: "edit"}}},
	} {
		p, err := planmode.Adjust(old, adjs, "r")
		if err == nil {
			t.Errorf("%+v accepted: %s", adjs, p)
			continue
		}
		if p.Version != 1 || statuses(p) != statuses(old) {
			t.Errorf("a rejected adjustment changed the plan: %s", p)
		}
	}
}

func TestValidate(t *testing.T) {
	known := func(t string) bool { return t == "read_file" }
	cases := map[string][]planmode.Step{
		"no steps":     nil,
		"used twice":   {{ID: "a"}, {ID: "a"}},
		"unknown step": {{ID: "a", DependsOn: []string{"b"}}},
		"cycle":        {{ID: "a", DependsOn: []string{"b"}}, {ID: "b", DependsOn: []string{"a"}}},
		"unknown tool": {{ID: "a", Tool: "rm_rf"}},
		"has no id":    {{ID: " "}},
	}
	for want, steps := range cases {
		err := planmode.Plan{Steps: steps}.Validate(known)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v", want, err)
		}
	}
	if err := (planmode.Plan{Steps: []planmode.Step{{ID: "a", Tool: "read_file"}, {ID: "b", DependsOn: []string{"a"}}}}).Validate(known); err != nil {
		t.Errorf("valid plan: %v", err)
	}
}
