package contract

// DiagnosticKindReview marks a review finding in DiagnosticData.Kind.
const DiagnosticKindReview = "review"

// DiagnosticData is the data of every diagnostic with source "kody": what
// an editor needs to act on the diagnostic later, since clients may send
// back only part of a diagnostic (Neovim keeps its code and data).
type DiagnosticData struct {
	// ID identifies the finding, as `kodyls review --format json` reports
	// it: a detector's violation is "<rule uuid>:<file>:<line>:<column>"
	// with the file relative to the workspace, a 1-based line and a 0-based
	// byte column.
	ID string `json:"id" jsonschema:"the finding's id, as kodyls review --format json reports it: <rule uuid>:<file>:<1-based line>:<0-based byte column> for a detector's violation; the argument of kodyls.dismissSuggestion for a review finding"`
	// Kind is DiagnosticKindReview for a review finding (the model's Kody
	// Rule violations included), absent for a detector's violation.
	Kind string `json:"kind,omitempty" jsonschema:"review for a finding of the AI review (the model's Kody Rule violations included); absent for a violation found by a rule's detector"`
	// Rule is the violated rule's uuid, absent for a review finding that
	// is not a Kody Rule violation.
	Rule string `json:"rule,omitempty" jsonschema:"the uuid of the violated Kody Rule, the argument of kodyls.showRule; absent for other review findings"`
	// Version is, for a detector's violation, the buffer version its id
	// and range refer to. The id names a place: once lines are added
	// above, the violation of that id in the newer text may be another
	// one. Sent back in a code action request, it lets the server find
	// where the diagnostic's violation moved. Absent for a review finding,
	// whose id does not depend on its place.
	Version int32 `json:"version,omitempty" jsonschema:"for a detector's violation, the buffer version its id and range refer to: once the text above changes, another violation may have that id; absent for a review finding"`
}
