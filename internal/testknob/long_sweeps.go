//go:build sweeps

package testknob

// long is true with the sweeps build tag (SweepsTag): the sweeps' full sizes.
const long = true
