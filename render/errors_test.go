package render

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kalypso-gitops/kalypso/scheduling"
)

func TestGroupFailures(t *testing.T) {
	var list []*scheduling.Assignment
	failed := map[string]*scheduling.Error{}
	pos := scheduling.Pos{File: "t.yaml", Line: 3}
	for _, dt := range []string{"a", "b", "c", "d", "e"} {
		a := &scheduling.Assignment{ClusterType: &scheduling.ClusterType{Object: scheduling.Object{Name: "ct"}}, Target: &scheduling.DeploymentTarget{Object: scheduling.Object{Name: dt}}}
		list = append(list, a)
		if dt != "e" {
			failed[a.Key()] = &scheduling.Error{Pos: pos, Object: `Template "x"`, Msg: "rendering " + a.Key() + ": boom"}
		}
	}
	other := &scheduling.Error{Pos: pos, Object: `Template "x"`, Msg: "rendering ct/d: other"}
	failed["ct/d"] = other
	errs := groupFailures(list, failed)
	require.Len(t, errs, 2)
	require.Equal(t, `t.yaml:3: Template "x": rendering 3 assignments (ct/a, ct/b, ct/c): boom`, errs[0].Error())
	require.Equal(t, other, errs[1])

	failed["ct/e"] = &scheduling.Error{Pos: pos, Object: `Template "x"`, Msg: "rendering ct/e: boom"}
	delete(failed, "ct/d")
	for _, k := range []string{"ct/d"} {
		failed[k] = &scheduling.Error{Pos: pos, Object: `Template "x"`, Msg: "rendering " + k + ": boom"}
	}
	require.Equal(t, `t.yaml:3: Template "x": rendering 5 assignments (ct/a, ct/b, ct/c and 2 more): boom`, groupFailures(list, failed)[0].Error())
}
