//go:build sweeps

package testenv

// long is true with the sweeps build tag (SweepsTag): the sweeps' full sizes.
const long = true
