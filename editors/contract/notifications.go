package contract

import (
	"reflect"

	"go.lsp.dev/uri"
)

// Custom methods kodyls sends or answers besides the LSP ones.
const (
	// NotificationRuleViolationsChanged tells the editor that the Kody Rules
	// violations of some open documents changed, so a violations panel can
	// call kodyls.ruleViolations again instead of polling.
	NotificationRuleViolationsChanged = "kodyls/ruleViolationsChanged"
	// NotificationStatus reports the state of the model and of the reviews, for a
	// status bar item.
	NotificationStatus = "kodyls/status"
	// RequestAwaitIdle is answered once no work is pending; tests and editor
	// end-to-end tests wait on it instead of on the clock.
	RequestAwaitIdle = "kodyls/awaitIdle"
)

// Directions of a custom method.
const (
	ServerToClient = "serverToClient"
	ClientToServer = "clientToServer"
)

// Message describes one custom notification or request.
type Message struct {
	Method      string
	Direction   string // ServerToClient or ClientToServer
	Description string
	Params      reflect.Type
	// Result is the type of a request's reply; nil for a notification.
	Result reflect.Type
}

// Notifications lists the custom notifications.
var Notifications = []Message{
	{
		Method:      NotificationRuleViolationsChanged,
		Direction:   ServerToClient,
		Description: "The Kody Rules violations of these open documents changed (found, moved, fixed, the rules reloaded, a document closed; a workspace folder added or removed, whose URI is among them); a panel calls `kodyls.ruleViolations` again instead of polling.",
		Params:      reflect.TypeFor[RuleViolationsChangedParams](),
	},
	{
		Method:      NotificationStatus,
		Direction:   ServerToClient,
		Description: "The model and review state, sent when it changes: `offline` (no endpoint configured: local rules only), `ready`, `reviewing` (reviews and explanations running, counted in `reviewing`), `degraded` (the last review lost model stages, to bad answers or to an endpoint that failed; the rest of its findings were kept), `endpointDown` (the message says what failed).",
		Params:      reflect.TypeFor[StatusParams](),
	},
}

// Requests lists the custom requests.
var Requests = []Message{
	{
		Method:      RequestAwaitIdle,
		Direction:   ClientToServer,
		Description: "Answered once no check, review, build or explanation is pending for that document (or for any, without `uri`); the project's own tests and editor end-to-end tests wait on it instead of on the clock.",
		Params:      reflect.TypeFor[AwaitIdleParams](),
		Result:      reflect.TypeFor[AwaitIdleResult](),
	},
}

// RuleViolationsChangedParams are the params of kodyls/ruleViolationsChanged.
type RuleViolationsChangedParams struct {
	URIs []uri.URI `json:"uris" jsonschema:"the open documents whose violations changed"`
}

// State is the model and review state reported by kodyls/status.
type State string

// States of kodyls/status.
const (
	// StateOffline: no model is configured; only local checks run.
	StateOffline State = "offline"
	// StateReady: a model is configured and no review is running.
	StateReady State = "ready"
	// StateReviewing: at least one review or explanation is running.
	StateReviewing State = "reviewing"
	// StateDegraded: the last review lost model stages, to bad answers or
	// to an endpoint that failed; its other findings were kept.
	StateDegraded State = "degraded"
	// StateEndpointDown: the endpoint does not answer; only local checks
	// run until it does.
	StateEndpointDown State = "endpointDown"
)

// States lists every State, in the order above.
var States = []State{StateOffline, StateReady, StateReviewing, StateDegraded, StateEndpointDown}

// StatusParams are the params of kodyls/status.
type StatusParams struct {
	State     State  `json:"state"`
	Message   string `json:"message,omitempty" jsonschema:"a short sentence for a tooltip, e.g. what to fix when the endpoint is down"`
	Reviewing int    `json:"reviewing" jsonschema:"reviews and explanations running"`
}

// AwaitIdleParams are the params of kodyls/awaitIdle.
type AwaitIdleParams struct {
	URI uri.URI `json:"uri,omitempty" jsonschema:"wait for this document only; omitted: wait for every document"`
}

// AwaitIdleResult is the (empty) result of kodyls/awaitIdle.
type AwaitIdleResult struct{}
