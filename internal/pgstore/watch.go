package pgstore

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Watch calls switched whenever the current generation changes, until ctx
// ends. It LISTENs on Channel for the notification a finished build sends,
// and also polls the current_generation row every poll (default 5 s), so
// a replica whose connection dropped or that missed a notification still
// switches. switched runs on Watch's goroutine; an error from it is
// reported to warn and retried on the next change or poll.
func (db *DB) Watch(ctx context.Context, known int64, poll time.Duration, switched func(ctx context.Context, gen int64) error, warn func(string)) {
	if poll <= 0 {
		poll = 5 * time.Second
	}
	if warn == nil {
		warn = func(string) {}
	}
	for ctx.Err() == nil {
		err := db.listen(ctx, &known, poll, switched, warn)
		if ctx.Err() != nil {
			return
		}
		warn("store: watching the current generation: " + err.Error() + " — retrying")
		select {
		case <-ctx.Done():
		case <-time.After(poll):
		}
	}
}

// listen holds one connection listening on Channel until it fails.
func (db *DB) listen(ctx context.Context, known *int64, poll time.Duration, switched func(context.Context, int64) error, warn func(string)) error {
	pc, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection carries a LISTEN: take it out of the pool for good.
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return err
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, poll)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var gen int64
		switch {
		case err == nil:
			gen, _ = strconv.ParseInt(n.Payload, 10, 64)
		case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
		default:
			return err
		}
		if gen == 0 {
			if gen, err = db.Current(ctx); errors.Is(err, ErrNoGeneration) {
				continue
			} else if err != nil {
				return err
			}
		}
		if gen != *known {
			if err := switched(ctx, gen); err != nil {
				warn("store: switch to generation " + strconv.FormatInt(gen, 10) + ": " + err.Error())
				continue
			}
			*known = gen
		}
	}
}
