// Package prompts holds every prompt kodyls sends to a language model and
// renders it with text/template.
//
// # Where prompts live
//
// Each prompt is one template file, templates/<name>.tmpl, embedded in the
// binary. The file starts with a header comment on its first line:
//
//	{{/* name: review_analyze_system; version: 3; purpose: one line saying what it is for */}}
//
// The header is parsed when the package loads; a file without a valid header,
// with a name that differs from its file name, or a duplicate name makes
// [Load] fail (and the package's tests fail), so a broken prompt never ships.
// Every prompt renders one documented Go data type (ReviewAnalyzeData for
// review_analyze_user, and so on: see [Example] and the golden files in
// testdata/golden). Rendering uses missingkey=error, so a template that asks
// for data it was not given is an error, never a silent "<no value>".
//
// # Overriding prompts in a workspace
//
// [LoadWorkspace] starts from the builtins and applies the workspace's own
// changes, reporting every problem without stopping:
//
//   - .kody/prompts/<name>.tmpl replaces the builtin of that name. Its header
//     is optional; when present it may omit the name (the file name gives it)
//     and may carry its own version. An override that does not parse, or
//     that fails to render the prompt's example data (a misspelt field, say),
//     is reported with its file and line and the builtin stays in force. An
//     override whose name matches no builtin is reported as a warning.
//   - kodus-config.yml (or .yaml) at the workspace root, in the format Kodus
//     users already have: v2PromptOverrides.categories.descriptions (bug,
//     performance, security), v2PromptOverrides.severity.flags (critical,
//     high, medium, low) and v2PromptOverrides.generation.main (extra review
//     instructions). The review prompts render the configured text where
//     given and kodyls' defaults (kodus_defaults.yml) elsewhere.
//
// # Versioning
//
// Callers cache model answers by (name, version, rendered text), and results
// are compared across versions, so a prompt's version must change whenever
// its text does: bump the version in the header. The tests enforce this with
// testdata/versions.txt, which records name, version and the SHA-256 of each
// template source (plus kodus_defaults.yml for the prompts that render those
// defaults); a changed hash with an unchanged version fails with "prompt X
// changed; bump its version and run go test ./prompts -update".
//
// An override reports version 1000*v + b, where v is the version in its own
// header (1 when absent) and b the builtin's version. That never equals a
// builtin version (builtins stay below 1000), and it changes both when the
// user bumps their override and when kodyls bumps the builtin underneath it,
// whose data may have changed. Its Source is the override's path, so logs
// and caches can tell the two apart without decoding the number.
//
// # Template functions
//
// Besides the text/template builtins: json (marshal without HTML escaping),
// indent N, numbered and numberedFrom N (prefix lines with line numbers),
// join SEP, default DEF, trim, fence LANG (a Markdown code fence longer than
// any backtick run in the code) and add. See funcs.go.
package prompts
