package sum

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSum(t *testing.T) {
	assert.Equal(t, 6, Sum(1, 2, 3), "sum of 1..3")
}

func TestSumNone(t *testing.T) {
	require.NotPanics(t, func() { Sum() })
}
