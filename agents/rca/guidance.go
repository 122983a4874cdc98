// Package rca explains build and test errors: parse, fingerprint, history,
// and (with a model) an agent, ReAct by default, that reads the code. This
// file holds the built-in guidance used when no model is configured: a
// short root cause and fix steps for the most common errors of each
// language, matched on the parsed error's tool, code and message.
package rca

import (
	"regexp"
	"strings"

	"github.com/kodustech/kodyls/analysis/errparse"
)

// Guidance is a canned explanation of a common error.
type Guidance struct {
	RootCause string
	Steps     []string
}

// guide matches errors by language and code or message pattern. The first
// match wins, so specific entries come before general ones.
type guide struct {
	language string         // "" = any
	code     string         // exact code, "" = any
	message  *regexp.Regexp // nil = any
	g        Guidance
}

var guides = []guide{
	// Go
	{"go", "", regexp.MustCompile(`^declared and not used`), Guidance{
		"A local variable is declared but never read; Go refuses unused variables at compile time.",
		[]string{"Use the variable where it was meant to be used, or delete its declaration.", "If it is only needed for its side effect, assign to the blank identifier `_` instead."}}},
	{"go", "", regexp.MustCompile(`^undefined: `), Guidance{
		"The name is not declared in this scope: a typo, a missing import, or an identifier that is not exported from its package.",
		[]string{"Check the spelling against the declaration.", "If it lives in another package, import it and qualify it (pkg.Name); exported names start with an upper-case letter.", "If it is declared in another file, make sure that file is in the same package and build."}}},
	{"go", "", regexp.MustCompile(`^cannot use .* as .* value`), Guidance{
		"A value of one type is used where another type is required; Go does not convert implicitly.",
		[]string{"Convert explicitly (e.g. strconv.Itoa, int(x), string(b)) or change the declared type.", "Check the function signature or struct field the value is passed to."}}},
	{"go", "panic", regexp.MustCompile(`assignment to entry in nil map`), Guidance{
		"A map was written before it was created: the zero value of a map is nil and cannot hold entries.",
		[]string{"Initialise the map with make(map[K]V) (or a literal) before the first write.", "For a struct field, initialise it in the constructor or lazily before writing."}}},
	{"go", "panic", regexp.MustCompile(`nil pointer dereference`), Guidance{
		"A nil pointer (or interface, map entry, or returned value) was dereferenced.",
		[]string{"Find which value is nil at the reported line (the deepest frame in your code).", "Check the error returned alongside it, or initialise the pointer before use.", "Guard with an explicit nil check where nil is a valid state."}}},
	{"go", "printf", nil, Guidance{
		"A Printf-style call's format verbs do not match its arguments (type or count).",
		[]string{"Use the verb that matches the argument's type (%d for integers, %s for strings, %v for any).", "Check that the number of arguments equals the number of verbs."}}},
	// TypeScript
	{"typescript", "TS2322", nil, Guidance{
		"A value is assigned to a variable, property or parameter whose declared type does not accept it.",
		[]string{"Change the value, convert it (Number(x), String(x)), or widen the declared type if both are valid."}}},
	{"typescript", "TS2339", nil, Guidance{
		"A property is accessed on a type that does not declare it.",
		[]string{"Check the property name and the type of the object.", "Add the property to the interface/type, or narrow the type (type guard) before the access."}}},
	{"typescript", "TS2304", nil, Guidance{
		"A name is used that is not declared or imported.",
		[]string{"Import it, declare it, or fix its spelling; for globals, add the right @types package."}}},
	// Rust
	{"rust", "E0382", nil, Guidance{
		"A value was used after it was moved: ownership went to another binding or function, so the original cannot be used any more.",
		[]string{"Borrow instead of moving (&v or &mut v) where the callee only needs to read or modify it.", "Clone the value if both places need their own copy.", "Reorder the code so the last use comes before the move."}}},
	{"rust", "E0308", nil, Guidance{
		"An expression's type differs from the type expected at that place.",
		[]string{"Read the expected and found types in the note; convert (into(), parse(), as) or change the annotation.", "Check the function's return type and each branch's value."}}},
	{"rust", "E0425", nil, Guidance{
		"A name is not found in this scope.",
		[]string{"Fix the spelling, bring it into scope with `use`, or declare it."}}},
	// C / C++ / linker
	{"", "", regexp.MustCompile(`undeclared \(first use in this function\)`), Guidance{
		"An identifier is used that was never declared in scope: usually a typo or a missing header.",
		[]string{"Follow the compiler's 'did you mean' suggestion if it is right.", "Include the header that declares it, or declare it before use."}}},
	{"", "", regexp.MustCompile(`undefined reference to|symbol\(s\) not found|unresolved external`), Guidance{
		"The linker found a declaration but no definition: the function or variable is not compiled in, or its library is not linked.",
		[]string{"Check that the source file defining the symbol is part of the build.", "Link the library that provides it (-l<name>) and check the order of libraries.", "Check that declaration and definition match exactly (name, signature, extern \"C\")."}}},
	{"cpp", "", regexp.MustCompile(`invalid initialization of reference`), Guidance{
		"A reference is bound to an expression of an incompatible type.",
		[]string{"Pass a value of the referenced type, or construct one explicitly (e.g. std::to_string).", "Check which overload is being called."}}},
	// Python
	{"python", "NameError", nil, Guidance{
		"A name is used before it is defined in any enclosing scope: a typo, a missing import, or a variable defined in another function.",
		[]string{"Check the spelling against the definition.", "Import the module or name, or pass the value in as a parameter.", "Define it before the line that uses it."}}},
	{"python", "SyntaxError", nil, Guidance{
		"The file is not valid Python at the reported position; nothing in it ran.",
		[]string{"Look at the caret and the line above it: a missing colon, bracket or quote is the usual cause.", "Check the indentation of the block."}}},
	{"python", "ValueError", regexp.MustCompile(`invalid literal for int\(\)`), Guidance{
		"A string that is not a number was converted with int().",
		[]string{"Validate or strip the input before converting.", "Catch ValueError where invalid input is expected and report it clearly."}}},
	{"python", "ModuleNotFoundError", nil, Guidance{
		"The imported module is not installed in the interpreter that ran the code, or its name is wrong.",
		[]string{"Install it in the active environment (pip install …) or activate the right virtualenv.", "Check the module name and your PYTHONPATH."}}},
	// Java
	{"java", "", regexp.MustCompile(`^incompatible types`), Guidance{
		"A value of one type is assigned or passed where an incompatible type is required.",
		[]string{"Convert explicitly (Integer.parseInt, String.valueOf) or change the declared type."}}},
	{"java", "", regexp.MustCompile(`^cannot find symbol`), Guidance{
		"A class, method or variable is not found: a typo, a missing import, or a missing dependency.",
		[]string{"Check the spelling and the symbol/location lines of the error.", "Add the import or the dependency that provides it."}}},
	{"java", "java.lang.NullPointerException", nil, Guidance{
		"A method or field was used on a null reference.",
		[]string{"Find the null value named in the message at the deepest frame in your code.", "Initialise it, or check for null where null is a valid state (Optional can make that explicit)."}}},
	// JavaScript / Node
	{"javascript", "TypeError", regexp.MustCompile(`is not a function`), Guidance{
		"Something that is not a function was called: the property is undefined, misspelt, or the module exports it under another name.",
		[]string{"Log or inspect the object to see what it holds.", "Check how the module exports it (default vs named export, CommonJS vs ESM)."}}},
	{"javascript", "TypeError", regexp.MustCompile(`Cannot read propert`), Guidance{
		"A property was read from undefined or null.",
		[]string{"Find which value is undefined at the reported line and why.", "Initialise it, or guard with optional chaining (?.) where absence is valid."}}},
	{"javascript", "", regexp.MustCompile(`ENOENT`), Guidance{
		"A file or directory that the code opens does not exist at that path (relative paths resolve against the process's working directory).",
		[]string{"Check the path and the working directory; build it from __dirname or import.meta.url if it should be relative to the code.", "Create the file, or handle its absence."}}},
	{"javascript", "no-unused-vars", nil, Guidance{
		"A variable is assigned but never used (ESLint).",
		[]string{"Use it or remove it; prefix with _ if your config allows intentionally unused names."}}},
}

// Lookup returns built-in guidance for an error.
func Lookup(e errparse.Error) (Guidance, bool) {
	for _, g := range guides {
		if g.language != "" && g.language != e.Language && !(g.language == "cpp" && e.Language == "c") {
			continue
		}
		if g.code != "" && !strings.EqualFold(g.code, e.Code) {
			continue
		}
		if g.message != nil && !g.message.MatchString(e.Message) {
			continue
		}
		return g.g, true
	}
	return Guidance{}, false
}
