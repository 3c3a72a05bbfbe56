//go:build !(amd64 || arm64) || noasm

package cpu

func detectLevel() Level { return Generic }
