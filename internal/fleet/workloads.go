package fleet

import (
	"fmt"
	"strings"
)

// WorkloadName is the name of workload i.
func (f *Fleet) WorkloadName(i int) string { return name("wl", i, f.Spec.Workloads) }

// WorkloadRepo is the repository URL of workload i.
func (f *Fleet) WorkloadRepo(i int) string {
	return "https://github.com/" + Owner + "/" + f.WorkloadName(i)
}

// RegistrationFile is the path in Main of workload i's WorkloadRegistration.
func (f *Fleet) RegistrationFile(i int) string { return "workloads/" + f.WorkloadName(i) + ".yaml" }

// WorkloadFile is the path in Workloads of workload i's Workload.
func (f *Fleet) WorkloadFile(i int) string {
	return Owner + "/" + f.WorkloadName(i) + "/main/workloads/workload.yaml"
}

// TargetName is the deployment target name of target t of workload i.
func (f *Fleet) TargetName(i, t int) string {
	return f.WorkloadName(i) + "-" + name("t", t, f.Spec.TargetsPerWorkload)
}

func (f *Fleet) addWorkloads() {
	for i := range f.Spec.Workloads {
		f.Main[f.RegistrationFile(i)] = file(fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: WorkloadRegistration
metadata:
  name: %s
spec:
  workload:
    repo: %s
    branch: main
    path: ./workloads
  workspace: team-%d
`, f.WorkloadName(i), f.WorkloadRepo(i), i%3))
		f.Workloads[f.WorkloadFile(i)] = file(f.workloadYAML(i))
	}
}

// workloadYAML is workload i: its `tier` label decides which policies select its targets.
func (f *Fleet) workloadYAML(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: %s
  labels:
    tier: tier-%d
    stack: bench
spec:
  deploymentTargets:
`, f.WorkloadName(i), i%f.tiers())
	for t := range f.Spec.TargetsPerWorkload {
		target := name("t", t, f.Spec.TargetsPerWorkload)
		fmt.Fprintf(&b, `    - name: %s
      environment: %s
      labels:
        ring: ring-%d
      manifests:
        repo: %s-gitops
        branch: %s
        path: ./%s
`, target, f.Spec.Environment, t%3, f.WorkloadRepo(i), f.Spec.Environment, target)
	}
	return b.String()
}
