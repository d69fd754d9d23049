package pickers

import (
	"context"
	"sync"
	"time"
)

// The live model list (DESIGN §16): beside [picker] models, the model
// option offers the models the providers list (the catalog's Discover).
// They are asked once, in the background, when the first session starts,
// and the answer is kept for the process. How a session waits for it, and
// when the list follows an answer, is acp's (acp/listed.go).

// A Listed is one model a provider lists, as the model option offers it.
type Listed struct {
	Spec string // PROVIDER:MODEL, the option's value
	Name string // as a picker shows it: the spec, marked "(no tools)" where it cannot call tools
}

// A Listing is the process's one ask of a Discover.
type Listing struct {
	discover func(context.Context) []Listed // nil lists none
	once     sync.Once
	ctx      context.Context
	cancel   context.CancelFunc
	done     chan struct{} // closed once models is set
	wg       sync.WaitGroup
	models   []Listed
}

// NewListing is the listing of discover; nil lists none.
func NewListing(discover func(context.Context) []Listed) *Listing {
	ctx, cancel := context.WithCancel(context.Background())
	return &Listing{discover: discover, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// On reports whether there is anything to list.
func (l *Listing) On() bool { return l.discover != nil }

// Start asks for the list in the background, the first time; later calls
// do nothing. arrived is called, in the background, once it is in.
func (l *Listing) Start(arrived func(models []Listed)) {
	if l.discover == nil {
		return
	}
	l.once.Do(func() {
		l.wg.Go(func() {
			l.models = l.discover(l.ctx)
			close(l.done)
			arrived(l.models)
		})
	})
}

// Await waits for the list (started), at most d or until ctx ends; false
// when d passed first.
func (l *Listing) Await(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-l.done:
	case <-ctx.Done():
	case <-timer.C:
		return false
	}
	return true
}

// Listed is the list when it has arrived; ok is false until then.
func (l *Listing) Listed() (models []Listed, ok bool) {
	select {
	case <-l.done:
		return l.models, true
	default:
		return nil, false
	}
}

// Stop stops an ask still running and waits for it.
func (l *Listing) Stop() {
	l.cancel()
	l.wg.Wait()
}
