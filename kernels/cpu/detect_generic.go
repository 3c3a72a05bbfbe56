//go:build !amd64 || noasm

package cpu

func detectLevel() Level { return Generic }
