//go:build !linux

package main

import "os"

// watchReaderGone: elsewhere than on Linux a consume finds its reader gone
// at its next write (EPIPE).
func watchReaderGone(*os.File, func()) (stop func()) { return func() {} }
