package controller

import (
	"sync"
)

// steps runs a sync's independent steps at once and returns when all have returned; one after
// the other, in order, when c.sequentialSteps is set (unit tests that check writes in order).
func (c *Controller) steps(steps ...func()) {
	if c.sequentialSteps {
		for _, step := range steps {
			step()
		}
		return
	}
	var wg sync.WaitGroup
	for _, step := range steps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			step()
		}()
	}
	wg.Wait()
}
