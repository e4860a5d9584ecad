//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package sysinfo

func maxRSSBytes(any) int64 { return 0 }

func selfMaxRSS() int64 { return 0 }
