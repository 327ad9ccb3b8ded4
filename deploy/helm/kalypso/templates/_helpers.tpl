{{/* Name of the chart, overridable with nameOverride. */}}
{{- define "kalypso.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified name of the release's objects. */}}
{{- define "kalypso.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "kalypso.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "kalypso.labels" -}}
helm.sh/chart: {{ include "kalypso.chart" . }}
{{ include "kalypso.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels selecting the pods. */}}
{{- define "kalypso.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kalypso.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "kalypso.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kalypso.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Secret holding the private key and the webhook secret. */}}
{{- define "kalypso.secretName" -}}
{{- default (include "kalypso.fullname" .) .Values.github.existingSecret }}
{{- end }}

{{- define "kalypso.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* Directory of the mounted config file and of the mounted private key. */}}
{{- define "kalypso.configDir" -}}/etc/kalypso/config{{- end }}
{{- define "kalypso.secretDir" -}}/etc/kalypso/secret{{- end }}

{{/*
Refuses settings in .Values.config that the chart manages itself, naming the value to
use instead.
*/}}
{{- define "kalypso.checkConfig" -}}
{{- $c := .Values.config | default dict }}
{{- if not (kindIs "map" $c) }}
{{- fail "config must be a map of settings (docs/configuration.md)" }}
{{- end }}
{{- $server := dig "server" dict $c }}
{{- if and (kindIs "map" $server) (hasKey $server "address") }}
{{- fail "config.server.address is set by the chart: use containerPorts.http" }}
{{- end }}
{{- if and (kindIs "map" $server) (hasKey $server "managementAddress") }}
{{- fail "config.server.managementAddress is set by the chart: use containerPorts.management" }}
{{- end }}
{{- $app := dig "github" "app" dict $c }}
{{- range $k := list "privateKey" "privateKeyFile" "webhookSecret" }}
{{- if and (kindIs "map" $app) (hasKey $app $k) }}
{{- fail (printf "config.github.app.%s is set by the chart from a Secret: use github.existingSecret or github.privateKey and github.webhookSecret" $k) }}
{{- end }}
{{- end }}
{{- $fleet := dig "fleet" dict $c }}
{{- range $k := list "clientSecret" "sessionKey" }}
{{- if and (kindIs "map" $fleet) (hasKey $fleet $k) }}
{{- fail (printf "config.fleet.%s is set by the chart from a Secret: use github.existingSecret or github.fleetClientSecret and github.fleetSessionKey" $k) }}
{{- end }}
{{- end }}
{{- if and (include "kalypso.storeDir" .) (gt (int .Values.replicaCount) 1) }}
{{- fail "config.store.path is an SQLite file, which serves one replica: set replicaCount 1, or store.driver postgres (docs/hub.md)" }}
{{- end }}
{{- $v := .Values.github }}
{{- if and $v.existingSecret (or $v.privateKey $v.webhookSecret $v.fleetClientSecret $v.fleetSessionKey) }}
{{- fail "set either github.existingSecret or the secrets themselves (github.privateKey, github.webhookSecret, github.fleet*), not both" }}
{{- end }}
{{- if and (not (include "kalypso.fleetEnabled" .)) (or $v.fleetClientSecret $v.fleetSessionKey) }}
{{- fail "github.fleetClientSecret and github.fleetSessionKey are used only with config.fleet.enabled=true" }}
{{- end }}
{{- end }}

{{/* "true" when the fleet view is enabled (config.fleet.enabled), else empty. */}}
{{- define "kalypso.fleetEnabled" -}}
{{- if dig "fleet" "enabled" false (.Values.config | default dict) }}true{{ end }}
{{- end }}

{{/* The git cache directory (config.cache.dir), empty when the cache is in memory. */}}
{{- define "kalypso.cacheDir" -}}
{{- dig "cache" "dir" "" (.Values.config | default dict) }}
{{- end }}

{{/* The folder of the hub's SQLite file (config.store.path), empty when none is set or
the store is PostgreSQL. */}}
{{- define "kalypso.storeDir" -}}
{{- $c := .Values.config | default dict }}
{{- $p := dig "store" "path" "" $c }}
{{- if and $p (ne (dig "store" "driver" "sqlite" $c) "postgres") }}{{ dir $p }}{{ end }}
{{- end }}
