package report

import (
	"encoding/json"
	"io"
	"net/url"
	"strings"
)

// SARIF 2.1.0, the subset kodyls writes. Field names follow the standard.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool     `json:"tool"`
	Results     []sarifResult `json:"results"`
	ColumnKind  string        `json:"columnKind"`
	Invocations []sarifInvoc  `json:"invocations,omitempty"`
}

type sarifInvoc struct {
	ExecutionSuccessful bool                `json:"executionSuccessful"`
	ToolNotifications   []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level   string       `json:"level"`
	Message sarifMessage `json:"message"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name,omitempty"`
	ShortDescription     sarifMessage   `json:"shortDescription"`
	DefaultConfiguration sarifRuleConf  `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties,omitempty"`
}

type sarifRuleConf struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	RelatedLocations    []sarifLocation   `json:"relatedLocations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
	Properties          map[string]any    `json:"properties,omitempty"`
}

type sarifLocation struct {
	ID               int                   `json:"id,omitempty"`
	PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
	Message          *sarifMessage         `json:"message,omitempty"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
	EndLine     int `json:"endLine,omitempty"`
	EndColumn   int `json:"endColumn,omitempty"`
}

// sarifLevel maps a severity to SARIF's levels.
func sarifLevel(sev string) string {
	switch strings.ToLower(sev) {
	case "critical", "high":
		return "error"
	case "medium":
		return "warning"
	default:
		return "note"
	}
}

// WriteSARIF renders the report as a SARIF 2.1.0 log. File paths are
// relative to the repository root (%SRCROOT%), as GitHub code scanning
// expects. Linked duplicates of a cluster are not separate results: they are
// the primary's related locations.
func (r *Report) WriteSARIF(w io.Writer) error {
	driver := sarifDriver{Name: "kodyls", Version: r.Version, InformationURI: "https://github.com/kodustech/kodyls", Rules: []sarifRule{}}
	ruleIndex := map[string]int{}
	results := []sarifResult{}
	for _, f := range r.Findings {
		if f.DuplicateOf != "" {
			continue
		}
		id := f.RuleID
		if id == "" {
			id = "kody/" + f.Label
		}
		idx, ok := ruleIndex[id]
		if !ok {
			idx = len(driver.Rules)
			ruleIndex[id] = idx
			desc := f.RuleTitle
			if desc == "" {
				desc = "Kody review: " + f.Label
			}
			driver.Rules = append(driver.Rules, sarifRule{
				ID: id, Name: sarifName(id), ShortDescription: sarifMessage{Text: desc},
				DefaultConfiguration: sarifRuleConf{Level: sarifLevel(f.Severity)},
				Properties:           map[string]any{"tags": []string{f.Label, f.Source}},
			})
		}
		text := f.Summary
		if f.Message != "" && f.Message != f.Summary {
			text += "\n\n" + f.Message
		}
		res := sarifResult{
			RuleID: id, RuleIndex: idx, Level: sarifLevel(f.Severity),
			Message:             sarifMessage{Text: text},
			Locations:           []sarifLocation{location(f.File, f.StartLine, f.StartColumn, f.EndLine, f.EndColumn)},
			PartialFingerprints: map[string]string{"kodylsFindingId/v1": f.ID},
			Properties:          map[string]any{"severity": f.Severity, "source": f.Source},
		}
		if f.ImprovedCode != "" {
			res.Properties["improvedCode"] = f.ImprovedCode
		}
		for i, d := range f.Duplicates {
			loc := location(d.File, d.StartLine, 0, d.EndLine, 0)
			loc.ID = i + 1
			loc.Message = &sarifMessage{Text: "the same suggestion applies here"}
			res.RelatedLocations = append(res.RelatedLocations, loc)
		}
		results = append(results, res)
	}
	inv := sarifInvoc{ExecutionSuccessful: !r.Interrupted}
	for _, f := range r.Files {
		for _, d := range f.Degraded {
			inv.ToolNotifications = append(inv.ToolNotifications, sarifNotification{Level: "warning", Message: sarifMessage{Text: f.Path + ": " + d}})
		}
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{{Tool: sarifTool{Driver: driver}, Results: results, ColumnKind: "utf16CodeUnits", Invocations: []sarifInvoc{inv}}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

func location(file string, startLine, startCol, endLine, endCol int) sarifLocation {
	reg := sarifRegion{StartLine: max(startLine, 1), StartColumn: startCol}
	if endLine >= startLine && endLine > 0 {
		reg.EndLine = endLine
		if endCol > 0 {
			reg.EndColumn = endCol
		}
	}
	return sarifLocation{PhysicalLocation: sarifPhysicalLocation{
		ArtifactLocation: sarifArtifact{URI: sarifURI(file), URIBaseID: "%SRCROOT%"},
		Region:           reg,
	}}
}

// sarifURI is the relative URI reference of a slash path: each segment
// percent-encoded, so that "#", "%", "?" and blanks in a file name are
// part of the name, and a ":" in the first segment escaped, which would
// otherwise read as a URI scheme ("c:x.go").
func sarifURI(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	segs[0] = strings.ReplaceAll(segs[0], ":", "%3A")
	return strings.Join(segs, "/")
}

// sarifName turns a rule id into a PascalCase-ish name SARIF viewers show.
func sarifName(id string) string {
	var b strings.Builder
	up := true
	for _, r := range id {
		if r == '/' || r == '-' || r == '_' || r == ' ' {
			up = true
			continue
		}
		if up && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}
