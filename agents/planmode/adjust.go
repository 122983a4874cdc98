package planmode

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// AdjustmentType is what an adjustment does to a step.
type AdjustmentType string

// Adjustment types.
const (
	AdjustModify    AdjustmentType = "MODIFY"     // new input; the step runs again
	AdjustRetry     AdjustmentType = "RETRY"      // run again, with a new input when one is given
	AdjustSkip      AdjustmentType = "SKIP"       // do not run the step
	AdjustAddBefore AdjustmentType = "ADD_BEFORE" // a new step the target then depends on
	AdjustAddAfter  AdjustmentType = "ADD_AFTER"  // a new step that depends on the target
	AdjustReplace   AdjustmentType = "REPLACE"    // a new step in the target's place
)

// AdjustmentTypes lists every type, for prompts and schemas.
var AdjustmentTypes = []AdjustmentType{AdjustModify, AdjustRetry, AdjustSkip, AdjustAddBefore, AdjustAddAfter, AdjustReplace}

// Adjustment is one change a reflection asks for.
type Adjustment struct {
	Type   AdjustmentType  `json:"type"`
	StepID string          `json:"stepId"`
	Input  json.RawMessage `json:"input,omitempty"` // MODIFY and RETRY
	Step   *Step           `json:"step,omitempty"`  // ADD_BEFORE, ADD_AFTER and REPLACE
	Reason string          `json:"reason,omitempty"`
}

// Adjust applies adjustments to p and returns the next version of the plan
// (Version+1, status adjusted, reason as its Reason); p itself is left as
// it was. A step that must run again takes the steps that depend on it
// along: their results were computed from the old one. Any invalid
// adjustment rejects the whole set, so a plan is never half-adjusted.
func Adjust(p Plan, adjs []Adjustment, reason string) (Plan, error) {
	if len(adjs) == 0 {
		return p, errors.New("no adjustments given")
	}
	c := p.clone()
	var rerun []string
	for i, a := range adjs {
		at := c.index(a.StepID)
		if at < 0 {
			return p, fmt.Errorf("adjustment %d (%s): there is no step %q", i+1, a.Type, a.StepID)
		}
		switch a.Type {
		case AdjustModify, AdjustRetry:
			if a.Type == AdjustModify && len(a.Input) == 0 {
				return p, fmt.Errorf("adjustment %d (MODIFY %s): no input given", i+1, a.StepID)
			}
			if len(a.Input) > 0 {
				c.Steps[at].Input = append(json.RawMessage(nil), a.Input...)
			}
			c.Steps[at].Status, c.Steps[at].Result = StepPending, ""
			rerun = append(rerun, a.StepID)
		case AdjustSkip:
			c.Steps[at].Status = StepSkipped
			if a.Reason != "" {
				c.Steps[at].Result = "skipped: " + a.Reason
			}
		case AdjustAddBefore, AdjustAddAfter, AdjustReplace:
			if a.Step == nil {
				return p, fmt.Errorf("adjustment %d (%s %s): no step given", i+1, a.Type, a.StepID)
			}
			s := *a.Step
			s.Input, s.DependsOn = slices.Clone(s.Input), slices.Clone(s.DependsOn)
			s.Status, s.Result, s.Attempts = StepPending, "", 0
			if a.Type == AdjustReplace {
				if s.ID == "" {
					s.ID = a.StepID
				}
				if s.ID != a.StepID {
					// Dependents of the replaced step now wait for its
					// replacement.
					for j := range c.Steps {
						for k, d := range c.Steps[j].DependsOn {
							if d == a.StepID {
								c.Steps[j].DependsOn[k] = s.ID
							}
						}
					}
				}
				if s.DependsOn == nil {
					s.DependsOn = slices.Clone(c.Steps[at].DependsOn)
				}
				c.Steps[at] = s
				rerun = append(rerun, s.ID)
				break
			}
			if s.ID == "" {
				s.ID = c.freshID()
			}
			if c.index(s.ID) >= 0 {
				return p, fmt.Errorf("adjustment %d (%s %s): step id %q is already used", i+1, a.Type, a.StepID, s.ID)
			}
			if a.Type == AdjustAddBefore {
				if !slices.Contains(c.Steps[at].DependsOn, s.ID) {
					c.Steps[at].DependsOn = append(c.Steps[at].DependsOn, s.ID)
				}
				if c.Steps[at].Status != StepSkipped {
					c.Steps[at].Status, c.Steps[at].Result = StepPending, ""
				}
				c.Steps = slices.Insert(c.Steps, at, s)
				rerun = append(rerun, a.StepID)
			} else {
				if len(s.DependsOn) == 0 {
					s.DependsOn = []string{a.StepID}
				}
				c.Steps = slices.Insert(c.Steps, at+1, s)
			}
		default:
			return p, fmt.Errorf("adjustment %d: unknown type %q; use one of %s", i+1, a.Type, typeList())
		}
	}
	for _, id := range rerun {
		c.resetDependents(id)
	}
	c.Version++
	c.Status = PlanAdjusted
	c.Reason = reason
	if err := c.Validate(nil); err != nil {
		return p, fmt.Errorf("the adjusted plan is invalid: %w", err)
	}
	return c, nil
}

// resetDependents sets every step that depends, directly or not, on id
// back to pending, unless it was skipped on purpose.
func (p *Plan) resetDependents(id string) {
	for changed := true; changed; {
		changed = false
		for i, s := range p.Steps {
			if s.Status == StepPending || s.Status == StepSkipped || !p.dependsOn(s, id) {
				continue
			}
			p.Steps[i].Status, p.Steps[i].Result = StepPending, ""
			changed = true
		}
	}
}

// dependsOn reports whether s depends on id through any chain.
func (p Plan) dependsOn(s Step, id string) bool {
	seen := map[string]bool{}
	var walk func(Step) bool
	walk = func(s Step) bool {
		for _, d := range s.DependsOn {
			if d == id {
				return true
			}
			if seen[d] {
				continue
			}
			seen[d] = true
			if ds, ok := p.Step(d); ok && walk(ds) {
				return true
			}
		}
		return false
	}
	return walk(s)
}

func (p Plan) freshID() string {
	for n := len(p.Steps) + 1; ; n++ {
		id := fmt.Sprintf("s%d", n)
		if p.index(id) < 0 {
			return id
		}
	}
}

func typeList() string {
	names := make([]string, len(AdjustmentTypes))
	for i, t := range AdjustmentTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}
