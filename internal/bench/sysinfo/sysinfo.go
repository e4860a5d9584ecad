// Package sysinfo describes the machine a benchmark runs on and the
// resources a process used, for benchmark reports: the CPU as `lscpu`
// names it, the load average, the memory, and a process's peak resident
// set size from its rusage. It depends on the standard library only, so
// the separate bench/peers module can use it too.
package sysinfo

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Machine is where a measurement ran, as reported at measurement time.
type Machine struct {
	// CPUModel and CPUs are lscpu's "Model name" and "CPU(s)"; when lscpu
	// is missing, CPUModel is empty and CPUs is runtime.NumCPU.
	CPUModel string `json:"cpu_model"`
	CPUs     int    `json:"cpus"`
	// MemGiB is MemTotal of /proc/meminfo (0 where there is none).
	MemGiB float64 `json:"mem_gib"`
	// LoadAvg is the 1, 5 and 15-minute load average of /proc/loadavg.
	LoadAvg   string `json:"load_average"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	GoVersion string `json:"go_version"`
	// RecordedAt is the UTC time the description was taken (RFC 3339).
	RecordedAt string `json:"recorded_at"`
}

// Line is the one-line form BENCHMARKS.md uses:
// "Intel(R) Xeon(R) Processor, 2 CPUs (lscpu), 23.4 GiB, load 1.20 0.80 0.50".
func (m Machine) Line() string {
	model := m.CPUModel
	if model == "" {
		model = "unknown CPU (no lscpu)"
	}
	s := fmt.Sprintf("%s, %d CPUs (lscpu)", model, m.CPUs)
	if m.MemGiB > 0 {
		s += fmt.Sprintf(", %.1f GiB", m.MemGiB)
	}
	if m.LoadAvg != "" {
		s += ", load " + m.LoadAvg
	}
	return s
}

// Describe runs lscpu and reads /proc for the running machine. Missing
// sources leave their fields empty; it never fails.
func Describe(ctx context.Context) Machine {
	m := Machine{CPUs: runtime.NumCPU(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, GoVersion: runtime.Version(),
		RecordedAt: time.Now().UTC().Format(time.RFC3339)}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "lscpu")
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if out, err := cmd.Output(); err == nil {
		model, cpus := ParseLscpu(string(out))
		m.CPUModel = model
		if cpus > 0 {
			m.CPUs = cpus
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.LoadAvg = ParseLoadAvg(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemGiB = ParseMemTotalGiB(string(b))
	}
	return m
}

// ParseLscpu returns the "Model name" and "CPU(s)" fields of lscpu's
// default output (empty and 0 when absent).
func ParseLscpu(out string) (model string, cpus int) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch strings.TrimSpace(key) {
		case "Model name":
			if model == "" {
				model = val
			}
		case "CPU(s)":
			if n, err := strconv.Atoi(val); err == nil && cpus == 0 {
				cpus = n
			}
		}
	}
	return model, cpus
}

// ParseLoadAvg keeps the three load averages of a /proc/loadavg line.
func ParseLoadAvg(s string) string {
	f := strings.Fields(s)
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// ParseMemTotalGiB reads MemTotal (kB) from /proc/meminfo text, in GiB
// rounded to 0.1.
func ParseMemTotalGiB(s string) float64 {
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return 0
			}
			return float64(int(kb/(1<<20)*10+0.5)) / 10
		}
	}
	return 0
}

// PeakRSS is the peak resident set size, in bytes, of a process that has
// exited (from its rusage); 0 where the platform does not report it.
func PeakRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	return maxRSSBytes(ps.SysUsage())
}

// SelfPeakRSS is the peak resident set size, in bytes, of the running
// process so far; 0 where the platform does not report it.
func SelfPeakRSS() int64 { return selfMaxRSS() }
