package app

import (
	"fmt"
	"io"

	"github.com/rs/zerolog"

	"github.com/kalypso-gitops/kalypso/config"
)

// NewLogger builds the base logger from the log settings: JSON lines or console output, with timestamps.
func NewLogger(cfg config.Log, w io.Writer) (zerolog.Logger, error) {
	level, err := zerolog.ParseLevel(cfg.Level)
	if err != nil {
		return zerolog.Nop(), fmt.Errorf("app: log.level: %w", err)
	}
	switch cfg.Format {
	case config.LogFormatJSON, "":
	case config.LogFormatConsole:
		w = zerolog.ConsoleWriter{Out: w, NoColor: true}
	default:
		return zerolog.Nop(), fmt.Errorf("app: log.format %q is not one of json, console", cfg.Format)
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger(), nil
}
