package app

import (
	"github.com/rcrowley/go-metrics"

	"github.com/kalypso-gitops/kalypso/internal/version"
)

// registerBuildInfo sets kalypso_build_info{version,revision,goversion} to 1.
func (s *Server) registerBuildInfo() {
	b := version.Get()
	name := labeled(MetricBuildInfo, "version", s.opts.version, "revision", b.Commit, "goversion", b.GoVersion)
	metrics.GetOrRegisterGauge(name, s.registry).Update(1)
}

// logStart writes the app's first log line, naming the build, and warns when no control plane
// is declared: the app then reads no repository as a control plane and reconciles nothing. New
// calls it, before anything that could log (such as the fleet view's background refresh).
func (s *Server) logStart() {
	b := version.Get()
	s.logger.Info().Str("version", s.opts.version).Str("commit", b.Commit).Str("built", b.Date).Str("go", b.GoVersion).
		Msg("kalypso starting")
	if len(s.cfg.ControlPlanes) == 0 {
		s.logger.Warn().Str("setting", "controlPlanes").
			Msg("controlPlanes is empty: no repository is read as a control plane, so nothing is reconciled; " +
				"set controlPlanes (KALYPSO_CONTROL_PLANES) to OWNER/REPO patterns such as my-org/platform-*")
	}
}
