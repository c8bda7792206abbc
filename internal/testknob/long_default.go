//go:build !sweeps

package testknob

// long is false without the sweeps build tag (SweepsTag): the sweeps' short sizes.
const long = false
