//go:build unix

package proc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCommandKillsTheGroup: when the deadline passes, the program and the
// child it forked are both killed, and Run returns although the child
// held the output pipe.
func TestCommandKillsTheGroup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// The shell starts a sleeping child, prints its pid and waits.
	cmd := Command(ctx, "sh", "-c", "sleep 60 & echo $!; wait")
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	if err == nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("run: %v, ctx %v: want a killed program after the deadline", err, ctx.Err())
	}
	pid, perr := strconv.Atoi(strings.TrimSpace(out.String()))
	if perr != nil {
		t.Fatalf("child pid %q: %v", out.String(), perr)
	}
	// The child was killed with its group: no such process (or a zombie
	// already reaped by init) — poll briefly, since reaping is not ours.
	for i := 0; ; i++ {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			break
		}
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(b), ") Z ") {
			break
		}
		if i > 200 {
			t.Fatalf("child %d of the killed program still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
