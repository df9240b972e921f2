package runner

import (
	"container/heap"
	"sync"
	"time"
)

// Scheduler wakes the jobs of any number of runners when each is due: one goroutine and one
// timer, set for the job due first, however many runners and jobs share it, rather than a
// goroutine and a timer for every job. A worker of a thousand accounts, nearly all of them
// waiting for their schedule, keeps one goroutine for all their triggers. A job due is run on a
// goroutine of its own (its runs go on side by side with those of other jobs), and is due again
// once its run ends (Runner.fire). The goroutine ends whenever no job is waiting, and starts
// again with the next. The zero value is not usable: NewScheduler.
type Scheduler struct {
	mu      sync.Mutex
	due     jobHeap
	running bool          // the goroutine is running
	wake    chan struct{} // the job due first changed
}

// NewScheduler returns a Scheduler with no jobs.
func NewScheduler() *Scheduler { return &Scheduler{wake: make(chan struct{}, 1)} }

// add makes j due at due.
func (s *Scheduler) add(j *runnerJob, due time.Time) {
	s.mu.Lock()
	if j.idx >= 0 {
		heap.Remove(&s.due, j.idx)
	}
	j.due = due
	heap.Push(&s.due, j)
	first := s.due[0] == j
	start := !s.running
	s.running = true
	s.mu.Unlock()
	switch {
	case start:
		go s.loop()
	case first:
		s.poke()
	}
}

// remove takes j out, if it is waiting.
func (s *Scheduler) remove(j *runnerJob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j.idx >= 0 {
		heap.Remove(&s.due, j.idx)
		s.poke() // the goroutine ends if j was the last
	}
}

func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// loop runs the jobs due, then waits for the next, until none is waiting.
func (s *Scheduler) loop() {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		s.mu.Lock()
		now := time.Now()
		var fire []*runnerJob
		for len(s.due) > 0 && !s.due[0].due.After(now) {
			fire = append(fire, heap.Pop(&s.due).(*runnerJob))
		}
		var wait time.Duration
		empty := len(s.due) == 0
		if empty {
			s.running = false
		} else {
			wait = s.due[0].due.Sub(now)
		}
		s.mu.Unlock()
		for _, j := range fire {
			go j.r.fire(j, j.due)
		}
		if empty {
			return
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C:
		case <-s.wake:
		}
	}
}

// jobHeap is the waiting jobs, the one due first at the top.
type jobHeap []*runnerJob

func (h jobHeap) Len() int           { return len(h) }
func (h jobHeap) Less(i, k int) bool { return h[i].due.Before(h[k].due) }
func (h jobHeap) Swap(i, k int) {
	h[i], h[k] = h[k], h[i]
	h[i].idx, h[k].idx = i, k
}

func (h *jobHeap) Push(x any) {
	j := x.(*runnerJob)
	j.idx = len(*h)
	*h = append(*h, j)
}

func (h *jobHeap) Pop() any {
	old := *h
	j := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	j.idx = -1
	return j
}
