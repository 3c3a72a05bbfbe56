//go:build !unix

package sdk

func setDeathSignal() {}

func redirectStdout() error { return nil }
