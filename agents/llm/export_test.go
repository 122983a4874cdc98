package llm

import "time"

// SetBackoffForTest shortens retry waits so tests of the retry loop run in
// milliseconds; Retry-After headers are still honoured as sent.
func SetBackoffForTest(g *Gateway, base, cap time.Duration) {
	g.backoffBase, g.backoffCap = base, cap
}

// ExtractJSON exposes the lenient extractor to table tests.
var ExtractJSON = extractJSON

// SetProbeTimeoutForTest sets how long the check that ends a cooldown
// waits, apart from the per-call timeout.
func SetProbeTimeoutForTest(g *Gateway, d time.Duration) { g.probeTimeout = d }
