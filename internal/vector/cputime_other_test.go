//go:build !unix

package vector

import "time"

// cpuTime is unavailable on this platform; reports show 0.
func cpuTime() time.Duration { return 0 }
