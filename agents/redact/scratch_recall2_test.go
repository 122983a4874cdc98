package redact

import (
	"math/rand/v2"
	"testing"
)

func TestScratchRecall2(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alph := map[string]string{
		"b62": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
		"hex": "0123456789abcdef",
		"b36": "abcdefghijklmnopqrstuvwxyz0123456789",
	}
	for _, name := range []string{"b62", "hex", "b36"} {
		for _, n := range []int{8, 12, 16, 24, 40} {
			var cls, wdy, ent, alt int
			for range 20000 {
				b := make([]byte, n)
				for i := range b {
					b[i] = alph[name][rng.IntN(len(alph[name]))]
				}
				v := string(b)
				switch {
				case classes(v) < 2:
					cls++
				case wordy(v):
					wdy++
				case !hasDigit(v) && classes(v) == 2 && !lettersAlternate(v):
					alt++
				case entropy(v) < requiredEntropy(n, 3):
					ent++
				}
			}
			t.Logf("%s len %d: classes %d wordy %d alt %d entropy %d (of 20000)", name, n, cls, wdy, alt, ent)
		}
	}
}
