package sysinfo

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

const lscpuXeon = `Architecture:                            x86_64
CPU op-mode(s):                          32-bit, 64-bit
CPU(s):                                  2
On-line CPU(s) list:                     0,1
Vendor ID:                               GenuineIntel
Model name:                              Intel(R) Xeon(R) Processor
CPU family:                              6
NUMA node0 CPU(s):                       0,1
`

func TestParseLscpu(t *testing.T) {
	tests := []struct {
		name, out, model string
		cpus             int
	}{
		{"xeon", lscpuXeon, "Intel(R) Xeon(R) Processor", 2},
		{"epyc", "CPU(s): 4\nModel name:   AMD EPYC 7B13\n", "AMD EPYC 7B13", 4},
		{"empty", "", "", 0},
		{"no model", "Architecture: aarch64\nCPU(s): 8\n", "", 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model, cpus := ParseLscpu(tt.out)
			if model != tt.model || cpus != tt.cpus {
				t.Errorf("got %q, %d; want %q, %d", model, cpus, tt.model, tt.cpus)
			}
		})
	}
}

func TestParseProc(t *testing.T) {
	if got := ParseLoadAvg("0.38 1.23 1.58 2/170 27160\n"); got != "0.38 1.23 1.58" {
		t.Errorf("load %q", got)
	}
	if got := ParseLoadAvg("garbage"); got != "" {
		t.Errorf("load of garbage %q", got)
	}
	if got := ParseMemTotalGiB("MemTotal:       24634436 kB\nMemFree: 1 kB\n"); got != 23.5 {
		t.Errorf("mem %v", got)
	}
	m := Machine{CPUModel: "Intel(R) Xeon(R) Processor", CPUs: 2, MemGiB: 23.5, LoadAvg: "0.38 1.23 1.58"}
	if got, want := m.Line(), "Intel(R) Xeon(R) Processor, 2 CPUs (lscpu), 23.5 GiB, load 0.38 1.23 1.58"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}

// TestPeakRSS runs this test binary as a child that touches 160 MiB and
// checks that the rusage of the exited child reports at least that.
func TestPeakRSS(t *testing.T) {
	if os.Getenv("SYSINFO_CHILD_ALLOC") != "" {
		return // the child's work happens in TestMain
	}
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("rusage max RSS not reported here")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeakRSS$")
	cmd.Env = append(os.Environ(), "SYSINFO_CHILD_ALLOC=160")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	got := PeakRSS(cmd.ProcessState)
	if got < 160<<20 {
		t.Errorf("peak RSS of the child %d bytes, want ≥ 160 MiB", got)
	}
	if got > 4<<30 {
		t.Errorf("peak RSS of the child %d bytes: unit conversion wrong?", got)
	}
	if self := SelfPeakRSS(); self <= 0 {
		t.Errorf("own peak RSS %d", self)
	}
	if PeakRSS(nil) != 0 {
		t.Error("nil process state must give 0")
	}
}

func TestMain(m *testing.M) {
	if os.Getenv("SYSINFO_CHILD_ALLOC") == "160" {
		b := make([]byte, 160<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		if !strings.Contains(string(b[:1]), "\x01") {
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestDescribe(t *testing.T) {
	m := Describe(t.Context())
	if m.CPUs <= 0 || m.GOOS == "" || m.RecordedAt == "" {
		t.Errorf("machine %+v", m)
	}
	if _, err := exec.LookPath("lscpu"); err == nil && m.CPUModel == "" && runtime.GOARCH == "amd64" {
		t.Errorf("lscpu present but no model name: %+v", m)
	}
}
