//go:build linux || darwin || freebsd || netbsd || openbsd

package sysinfo

import (
	"runtime"
	"syscall"
)

// maxRSSBytes converts rusage's ru_maxrss to bytes: Linux and the BSDs
// count kibibytes, macOS bytes.
func maxRSSBytes(usage any) int64 {
	ru, ok := usage.(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	return rssUnit(int64(ru.Maxrss))
}

func rssUnit(v int64) int64 {
	if runtime.GOOS == "darwin" {
		return v
	}
	return v * 1024
}

func selfMaxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return rssUnit(int64(ru.Maxrss))
}
