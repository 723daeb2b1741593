package main_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/inspect"
	"github.com/gocurator/curator/internal/testenv"
)

// A queue in Curator's DistributedQueue layout (queuePath/queue-<seq>,
// persistent sequential; a priority item's name carries its priority), its
// lock path (the same name, ephemeral, while a consumer holds the item),
// and a SimpleDistributedQueue (qn-<seq>), made by raw creates: inspect
// lists the items in the order they were put, with the depth and the
// oldest item's age, in JSON and in the table.
func testQueue(t *testing.T, e *env) {
	ctx := testenv.Ctx(t, testTimeout)
	base := e.path(t)
	q, locks, simple := base+"/items", base+"/locks", base+"/simple"
	c := newClient(t, e)
	consumer := newClient(t, e)
	var made []string
	for _, prefix := range []string{"queue-", "queue-", "queue-|0000019A2B3C4D5E|"} {
		p, err := c.Create(ctx, q+"/"+prefix, []byte{1, 0, 0, 0, 1, 'x', 2}, framework.WithMode(framework.ModePersistentSequential), framework.WithParentContainers())
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, p)
	}
	claim := locks + "/" + framework.NodeName(made[0])
	if _, err := consumer.Create(ctx, claim, nil, framework.WithMode(framework.ModeEphemeral), framework.WithParentContainers()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, simple+"/qn-", []byte("job"), framework.WithMode(framework.ModePersistentSequential), framework.WithParentContainers()); err != nil {
		t.Fatal(err)
	}
	s := e.snapshot(t, base)
	r := recipeAt(t, s, q, inspect.KindQueue)
	if got := paths(r.Items); !slices.Equal(got, made) || r.Depth == nil || *r.Depth != 3 {
		t.Fatalf("items %v depth %v, want %v", got, r.Depth, made)
	}
	for _, it := range r.Items {
		if it.Role != inspect.RoleItem || it.Session != "0x0" || it.DataSize != 7 || it.Token == 0 || it.Ctime.IsZero() {
			t.Errorf("item %+v", it)
		}
	}
	if r.OldestMillis == nil || *r.OldestMillis != r.Items[0].AgeMillis {
		t.Errorf("oldest %v ms, the first item's age %d ms", r.OldestMillis, r.Items[0].AgeMillis)
	}
	l := recipeAt(t, s, locks, inspect.KindQueueClaims)
	if got := paths(l.Items); !slices.Equal(got, []string{claim}) || l.Items[0].Role != inspect.RoleClaim || l.Items[0].Session != sessionOf(consumer) {
		t.Errorf("claims %+v", l.Items)
	}
	if sq := recipeAt(t, s, simple, inspect.KindQueue); len(sq.Items) != 1 || sq.Items[0].Data != "job" {
		t.Errorf("simple queue %+v", sq.Items)
	}
	table := e.ok(t, "inspect", base).stdout
	for _, want := range []string{q + "  queue (DistributedQueue family, SimpleDistributedQueue)  (3 nodes, oldest ",
		"item 3  " + framework.NodeName(made[2]), "claim 1  " + framework.NodeName(claim) + "  " + sessionOf(consumer)} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
}
