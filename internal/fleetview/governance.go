package fleetview

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kalypso-gitops/kalypso/internal/store"
	"github.com/kalypso-gitops/kalypso/internal/window"
	"github.com/kalypso-gitops/kalypso/scheduling"
)

// Governance is what governs an environment's promotions: its windows (its own and the
// freezes that select it) with the verdict now, who approves, and a hold.
type Governance struct {
	Windows    []WindowSpec `json:"windows,omitempty"`
	Window     string       `json:"window,omitempty"` // the verdict now, naming the window that decided it
	WindowOpen bool         `json:"windowOpen"`
	Approvers  []string     `json:"approvers,omitempty"` // users and org/team; none: every writer
	Required   int          `json:"required,omitempty"`  // distinct approvals a manual promotion needs
	Hold       *Hold        `json:"hold,omitempty"`
}

// WindowSpec is one promotion window.
type WindowSpec struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Schedule string `json:"schedule"`
	Duration string `json:"duration"`
	TimeZone string `json:"timeZone"`
}

// Hold says who holds an environment (after a rollback), why and since when.
type Hold struct {
	By     string    `json:"by"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
}

// Holds lists the holds of a control plane's environments (store.Store.Holds).
type Holds func(ctx context.Context, controlPlane string) ([]store.Hold, error)

// governanceOf reads the governance of a stage at now, with its hold (nil when not held).
func governanceOf(st *scheduling.Stage, now time.Time, hold *store.Hold) Governance {
	var g Governance
	if st != nil {
		for _, w := range st.Windows {
			g.Windows = append(g.Windows, WindowSpec{Name: w.Name, Kind: string(w.Kind), Schedule: w.Schedule,
				Duration: w.Duration.String(), TimeZone: w.Location.String()})
		}
		if len(st.Windows) > 0 {
			v := window.Decide(st.Windows, now)
			g.Window, g.WindowOpen = v.Short(), v.Open
		}
		if st.Manual {
			g.Approvers, g.Required = st.Approvers, st.Required
		}
	}
	if hold != nil {
		g.Hold = &Hold{By: hold.By, Reason: hold.Reason, Since: hold.Since}
	}
	return g
}

// approversText says who may approve a manual promotion and how many must.
func approversText(st *scheduling.Stage, cp string) string {
	who := "users with write permission on " + cp
	if len(st.Approvers) > 0 {
		who = strings.Join(st.Approvers, ", ")
	}
	if st.Required > 1 {
		return fmt.Sprintf("%d of %s", st.Required, who)
	}
	return who
}

// holdOf finds an environment's hold in a control plane's holds.
func holdOf(holds []store.Hold, env string) *store.Hold {
	for i := range holds {
		if holds[i].Environment == env {
			return &holds[i]
		}
	}
	return nil
}
