{{/* Names, labels and the pieces every pod shares. */}}

{{- define "vibey-gh.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "vibey-gh.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The full name cut short enough to prefix per-node names (Jobs 63, CronJobs 52 characters). */}}
{{- define "vibey-gh.shortname" -}}
{{- include "vibey-gh.fullname" . | trunc 20 | trimSuffix "-" -}}
{{- end -}}

{{/*
A node name made safe and short for object names: dots become dashes, the name is cut, and a
hash of the whole name keeps two long names with one prefix apart.
*/}}
{{- define "vibey-gh.nodeSlug" -}}
{{- $slug := . | replace "." "-" | trunc 16 | trimSuffix "-" -}}
{{- printf "%s-%s" $slug (sha256sum . | trunc 6) -}}
{{- end -}}

{{- define "vibey-gh.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "vibey-gh.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vibey-gh.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "vibey-gh.labels" -}}
helm.sh/chart: {{ include "vibey-gh.chart" . }}
{{ include "vibey-gh.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "vibey-gh.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "vibey-gh.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "vibey-gh.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "vibey-gh.runnerServiceName" -}}
{{- printf "%s-runner" (include "vibey-gh.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The node's own production runner, through the node-local Service. */}}
{{- define "vibey-gh.productionUrl" -}}
{{- printf "http://%s.%s.svc:%d" (include "vibey-gh.runnerServiceName" .) .Release.Namespace (int .Values.runner.port) -}}
{{- end -}}

{{- define "vibey-gh.stateClaimName" -}}
{{- default (printf "%s-state" (include "vibey-gh.fullname" .)) .Values.state.existingClaim -}}
{{- end -}}

{{/* Mount points inside every container; the image's ENV names the same places. */}}
{{- define "vibey-gh.paths" -}}
state: /var/lib/vibey-gh/slots
models: /var/lib/vibey-gh/models
config: /etc/vibey-gh
scripts: /opt/vibey-gh/scripts
answer: /run/vibey-gh
textfile: /var/lib/vibey-gh/textfile
home: /home/vibey
tmp: /tmp
{{- end -}}

{{/*
vibey-gh.toml for one use. Call with (dict "root" $ "productionUrl" URL). The runner's
start-up check names its private server; everyone else names the node-local Service.
*/}}
{{- define "vibey-gh.toml" -}}
{{- $v := .root.Values -}}
{{- $c := $v.config -}}
{{- $b := $c.bounds -}}
# written by the vibey-gh chart; change values.yaml, not this file
[local_models]
{{- if kindIs "string" $c.concurrentRuns }}
concurrent_runs = {{ $c.concurrentRuns | quote }}
{{- else }}
concurrent_runs = {{ int $c.concurrentRuns }}
{{- end }}
runner = "ollama"
model = {{ $v.model | quote }}
window = {{ int $v.window }}
production_url = {{ .productionUrl | quote }}
calibration_port = {{ int $c.calibrationPort }}
runner_binary = "/usr/bin/ollama"
max_tokens = {{ int $c.maxTokens }}
stale_after_days = {{ $c.staleAfterDays | float64 }}
{{- /* production's OLLAMA_* settings (runner.extraEnv): the calibration runner mirrors them and
the fingerprint holds them; none set is a configured none, not a reason to look elsewhere */}}
{{- $settings := list }}
{{- range $v.runner.extraEnv }}
{{- if and (hasPrefix "OLLAMA_" .name) (hasKey . "value") }}
{{- $settings = append $settings (printf "%s = %s" .name (toString .value | quote)) }}
{{- end }}
{{- end }}
runner_env = { {{ join ", " $settings }} }

[local_models.bounds]
wired_ceiling = {{ $b.wiredCeiling | float64 }}
swap_factor = {{ $b.swapFactor | float64 }}
swap_floor_mb_per_min = {{ $b.swapFloorMbPerMin | float64 }}
fidelity_tolerance = {{ $b.fidelityTolerance | float64 }}
min_gain = {{ $b.minGain | float64 }}
patience = {{ int $b.patience }}
{{- end -}}

{{/* Pod-level security: non-root, the image's user, the runtime's seccomp profile. */}}
{{- define "vibey-gh.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
fsGroup: {{ .Values.securityContext.fsGroup }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Container-level security: read-only root, no escalation, no capabilities. */}}
{{- define "vibey-gh.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop:
    - ALL
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/*
The resources of every container that is, or judges, the node's runner: the runner, its start-up
check and the calibration Job. The GPU count goes into limits (requests follow limits for
extended resources).
*/}}
{{- define "vibey-gh.resources" -}}
{{- $resources := deepCopy .Values.runner.resources -}}
{{- if gt (int .Values.gpu.count) 0 -}}
{{- $limits := default (dict) $resources.limits -}}
{{- $_ := set $limits .Values.gpu.resourceName (int .Values.gpu.count) -}}
{{- $_ := set $resources "limits" $limits -}}
{{- end -}}
{{- toYaml $resources -}}
{{- end -}}

{{/* Where runners and calibrations may be scheduled: the model nodes, and GPU nodes if asked. */}}
{{- define "vibey-gh.runnerNodeSelector" -}}
{{- $selector := merge (deepCopy .Values.gpu.nodeSelector) (deepCopy .Values.runner.nodeSelector) -}}
{{- if $selector -}}
{{- toYaml $selector -}}
{{- end -}}
{{- end -}}

{{/* The volumes every vibey-gh pod mounts. */}}
{{- define "vibey-gh.commonVolumes" -}}
- name: state
  persistentVolumeClaim:
    claimName: {{ include "vibey-gh.stateClaimName" . }}
- name: models
{{- if .Values.modelStore.existingClaim }}
  persistentVolumeClaim:
    claimName: {{ .Values.modelStore.existingClaim }}
{{- else }}
  hostPath:
    path: {{ .Values.modelStore.hostPath }}
    type: DirectoryOrCreate
{{- end }}
- name: config
  configMap:
    name: {{ include "vibey-gh.fullname" . }}-config
- name: scripts
  configMap:
    name: {{ include "vibey-gh.fullname" . }}-scripts
    defaultMode: 0555
- name: home
  emptyDir: {}
- name: tmp
  emptyDir: {}
{{- end -}}

{{/* The environment every vibey-gh process reads. Call with (dict "root" $ "config" FILE). */}}
{{- define "vibey-gh.commonEnv" -}}
{{- $paths := include "vibey-gh.paths" .root | fromYaml -}}
- name: VIBEY_GH_CONFIG
  value: {{ printf "%s/%s" $paths.config .config | quote }}
- name: VIBEY_GH_SLOTS_DIR
  value: {{ $paths.state | quote }}
- name: VIBEY_GH_NODE
  valueFrom:
    fieldRef:
      fieldPath: spec.nodeName
- name: OLLAMA_MODELS
  value: {{ $paths.models | quote }}
- name: HOME
  value: {{ $paths.home | quote }}
- name: TMPDIR
  value: {{ $paths.tmp | quote }}
- name: NODE_NAME
  valueFrom:
    fieldRef:
      fieldPath: spec.nodeName
{{- end -}}

{{- define "vibey-gh.commonMounts" -}}
{{- $paths := include "vibey-gh.paths" . | fromYaml -}}
- name: state
  mountPath: {{ $paths.state }}
- name: models
  mountPath: {{ $paths.models }}
- name: config
  mountPath: {{ $paths.config }}
  readOnly: true
- name: scripts
  mountPath: {{ $paths.scripts }}
  readOnly: true
- name: home
  mountPath: {{ $paths.home }}
- name: tmp
  mountPath: {{ $paths.tmp }}
{{- end -}}

{{/*
The arguments of `vibey-gh slots calibrate` for one node. Call with
(dict "root" $ "node" NAME "onlyIfRequested" BOOL).
*/}}
{{- define "vibey-gh.calibrateArgs" -}}
{{- $v := .root.Values -}}
{{- $paths := include "vibey-gh.paths" .root | fromYaml -}}
{{- if .onlyIfRequested }}
- --if-requested
{{- end }}
- --runner
- ollama
- --window
- {{ int $v.window | quote }}
- --out
- {{ printf "%s/calibrations/%s" $paths.state .node | quote }}
{{- if $v.calibration.waitIdleSeconds }}
- --wait-idle
- {{ int $v.calibration.waitIdleSeconds | quote }}
{{- end }}
{{- if $v.calibration.slots }}
- --slots
- {{ $v.calibration.slots | quote }}
{{- end }}
{{- range $v.calibration.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/*
The pod of one node's calibration (a Job's or a CronJob's). Call with
(dict "root" $ "node" NAME "onlyIfRequested" BOOL).
*/}}
{{- define "vibey-gh.calibrationPod" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $paths := include "vibey-gh.paths" $root | fromYaml -}}
metadata:
  labels:
    {{- include "vibey-gh.selectorLabels" $root | nindent 4 }}
    app.kubernetes.io/component: calibration
  annotations:
    vibey-gh/node: {{ .node | quote }}
spec:
  restartPolicy: Never
  serviceAccountName: {{ include "vibey-gh.serviceAccountName" $root }}
  automountServiceAccountToken: false
  enableServiceLinks: false
  {{- with $v.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- include "vibey-gh.podSecurityContext" $root | nindent 4 }}
  # pinned: the evidence this pod records belongs to the node it runs on
  nodeSelector:
    kubernetes.io/hostname: {{ .node | quote }}
    {{- with $v.gpu.nodeSelector }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $v.runner.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: calibrate
      image: {{ include "vibey-gh.image" $root }}
      imagePullPolicy: {{ $v.image.pullPolicy }}
      workingDir: {{ $paths.home }}
      command:
        - /bin/sh
        - {{ printf "%s/calibrate-node.sh" $paths.scripts }}
      args:
        {{- include "vibey-gh.calibrateArgs" . | trim | nindent 8 }}
      env:
        {{- include "vibey-gh.commonEnv" (dict "root" $root "config" "vibey-gh.toml") | nindent 8 }}
        - name: OLLAMA_NOPRUNE
          value: "1"
        - name: VIBEY_GH_PRODUCTION_URL
          value: {{ include "vibey-gh.productionUrl" $root | quote }}
        - name: VIBEY_GH_WAIT_FOR_RUNNER_SECONDS
          value: {{ int $v.calibration.waitForRunnerSeconds | quote }}
        - name: VIBEY_GH_WINDOW
          value: {{ int $v.window | quote }}
        - name: VIBEY_GH_CORPUS
          value: {{ printf "%s/%s" $paths.state (default (printf "corpus-%d.json" (int $v.window)) $v.calibration.corpus) | quote }}
      securityContext:
        {{- include "vibey-gh.containerSecurityContext" $root | nindent 8 }}
      resources:
        {{- include "vibey-gh.resources" $root | nindent 8 }}
      volumeMounts:
        {{- include "vibey-gh.commonMounts" $root | nindent 8 }}
  volumes:
    {{- include "vibey-gh.commonVolumes" $root | nindent 4 }}
{{- end -}}
