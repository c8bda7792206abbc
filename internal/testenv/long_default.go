//go:build !sweeps

package testenv

// long is false without the sweeps build tag (SweepsTag): the sweeps' short sizes.
const long = false
