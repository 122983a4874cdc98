package redact

import (
	"math/rand/v2"
	"testing"
)

func TestScratchRecall(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alph := map[string]string{
		"b62": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
		"hex": "0123456789abcdef",
		"HEX": "0123456789ABCDEF",
		"b64": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
		"b36": "abcdefghijklmnopqrstuvwxyz0123456789",
		"pw":  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#^+_-",
	}
	for _, name := range []string{"b62", "hex", "HEX", "b64", "b36", "pw"} {
		for _, n := range []int{8, 10, 12, 16, 20, 24, 32, 40, 64} {
			miss := 0
			for range 20000 {
				b := make([]byte, n)
				for i := range b {
					b[i] = alph[name][rng.IntN(len(alph[name]))]
				}
				if !looksRandom(string(b), DefaultEntropyThreshold) {
					miss++
				}
			}
			t.Logf("%s len %d: miss %.2f%%", name, n, float64(miss)*100/20000)
		}
	}
}
