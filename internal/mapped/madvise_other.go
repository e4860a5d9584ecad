//go:build unix && !linux

package mapped

func dontNeed([]byte) {}
