package ocr

import (
	"context"
	"os/exec"
	"time"
)

// CommandContext is exec.CommandContext for the external programs of OCR
// (tesseract, pdftoppm, pdfinfo): the program runs in a process group of
// its own, and ctx's end kills the whole group, so no helper it started
// outlives a cancelled or timed-out page. Its output pipes are given up
// shortly after (WaitDelay), should a stray grandchild hold them open.
func CommandContext(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	ownGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	return cmd
}
