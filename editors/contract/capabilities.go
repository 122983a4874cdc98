package contract

// ExperimentalKey is the key under capabilities.experimental of the
// initialize request where an editor plugin of kodyls declares
// ClientExperimental.
const ExperimentalKey = "kodyls"

// ClientExperimental is what an editor plugin of kodyls (the VS Code
// extension, the Neovim plugin) declares in
// capabilities.experimental.kodyls. A generic LSP client (Helix, eglot)
// declares nothing, and the server adapts.
type ClientExperimental struct {
	// CommandResults: the editor shows the results of kodyls commands
	// itself, such as the explanation kodyls.explainError returns. Without
	// it, clients drop command results, so the server shows the explanation
	// itself: as a Markdown document (window/showDocument) when the client
	// supports it, else as a message (window/showMessage).
	CommandResults bool `json:"commandResults,omitempty" jsonschema:"the editor shows the results of kodyls commands itself; without it the server shows an explanation as a Markdown document (window/showDocument) or a message"`
}
