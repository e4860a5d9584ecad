//go:build !unix

package embed

import "time"

// cpuTime is unavailable on this platform; reports show 0.
func cpuTime() time.Duration { return 0 }
