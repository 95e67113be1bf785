{{/* Chart name, truncated to the 63 characters DNS labels allow. */}}
{{- define "itw.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name: the release name, with the chart name appended unless already in it. */}}
{{- define "itw.fullname" -}}
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

{{- define "itw.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "itw.selectorLabels" -}}
app.kubernetes.io/name: {{ include "itw.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: webhook
{{- end }}

{{- define "itw.labels" -}}
helm.sh/chart: {{ include "itw.chart" . }}
{{ include "itw.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: instancetype-webhook
{{- end }}

{{- define "itw.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "itw.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding tls.crt / tls.key (and ca.crt) the server reads. */}}
{{- define "itw.tlsSecretName" -}}
{{- if eq .Values.tls.source "secret" }}
{{- required "tls.existingSecret is required with tls.source=secret" .Values.tls.existingSecret }}
{{- else }}
{{- printf "%s-tls" (include "itw.fullname" .) }}
{{- end }}
{{- end }}

{{- define "itw.certificateName" -}}
{{- printf "%s-serving" (include "itw.fullname" .) }}
{{- end }}

{{- define "itw.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The DNS names the API server uses to reach the Service. */}}
{{- define "itw.serviceHosts" -}}
{{- $svc := include "itw.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) | toJson }}
{{- end }}

{{/*
Generated certificates (tls.source=helm): reuse the Secret already in the cluster when it can be
looked up (upgrades keep the CA), otherwise generate a CA and a serving certificate. Computed once
per render and cached in .Values so the Secret and both caBundles agree.
CA rotation (tls.helm.rotateCA=true): a new CA and serving certificate replace the Secret's, and the
old CA stays in the Secret (ca-previous.crt) and in caBundle (old + new) while rotateCA stays true;
the next upgrade without it drops the old CA. "bundle" is what caBundle carries.
*/}}
{{- define "itw.generatedTLS" -}}
{{- if not .Values._generatedTLS }}
{{- $secret := lookup "v1" "Secret" .Release.Namespace (include "itw.tlsSecretName" .) }}
{{- $data := dict }}
{{- if and $secret $secret.data (index $secret.data "ca.crt") (index $secret.data "tls.crt") (index $secret.data "tls.key") }}
{{- $data = $secret.data }}
{{- end }}
{{- $rotate := .Values.tls.helm.rotateCA }}
{{- $previous := "" }}
{{- if and $data (or (not $rotate) (index $data "ca-previous.crt")) }}
{{- if $rotate }}{{ $previous = index $data "ca-previous.crt" }}{{ end }}
{{- $_ := set .Values "_generatedTLS" (dict "ca" (index $data "ca.crt") "crt" (index $data "tls.crt") "key" (index $data "tls.key")) }}
{{- else }}
{{- $days := int .Values.tls.helm.days }}
{{- $ca := genCA (printf "%s CA %s" (include "itw.fullname" .) (now | date "2006-01-02T15:04Z")) $days }}
{{- $hosts := include "itw.serviceHosts" . | fromJsonArray }}
{{- $cert := genSignedCert (index $hosts 2) nil $hosts $days $ca }}
{{- if and $rotate $data }}{{ $previous = index $data "ca.crt" }}{{ end }}
{{- $_ := set .Values "_generatedTLS" (dict "ca" ($ca.Cert | b64enc) "crt" ($cert.Cert | b64enc) "key" ($cert.Key | b64enc)) }}
{{- end }}
{{- $bundle := .Values._generatedTLS.ca }}
{{- if $previous }}
{{- $bundle = printf "%s%s" ($previous | b64dec) (.Values._generatedTLS.ca | b64dec) | b64enc }}
{{- end }}
{{- $_ := set .Values._generatedTLS "previous" $previous }}
{{- $_ := set .Values._generatedTLS "bundle" $bundle }}
{{- end }}
{{- end }}

{{/* Everything a webhook entry shares: clientConfig is added by the caller. */}}
{{- define "itw.webhookCommon" -}}
admissionReviewVersions: ["v1"]
sideEffects: None
failurePolicy: {{ .Values.webhook.failurePolicy }}
timeoutSeconds: {{ .Values.webhook.timeoutSeconds }}
matchPolicy: Equivalent
namespaceSelector:
  matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values: {{ concat (list "kube-system" .Release.Namespace) .Values.webhook.excludeNamespaces | uniq | toJson }}
    {{- /* values are label values, always strings: `--set ...values[0]=true` must not become a boolean */}}
    {{- range .Values.webhook.namespaceSelectorExpressions }}
    - key: {{ .key | quote }}
      operator: {{ .operator }}
      {{- if .values }}
      values: [{{ range $i, $v := .values }}{{ if $i }}, {{ end }}{{ toString $v | quote }}{{ end }}]
      {{- end }}
    {{- end }}
{{- end }}

{{- define "itw.clientConfig" -}}
{{- $ctx := index . 0 }}
{{- $path := index . 1 }}
clientConfig:
  service:
    name: {{ include "itw.fullname" $ctx }}
    namespace: {{ $ctx.Release.Namespace }}
    path: {{ $path }}
    port: {{ $ctx.Values.service.port }}
  {{- if eq $ctx.Values.tls.source "helm" }}
  {{- include "itw.generatedTLS" $ctx }}
  caBundle: {{ $ctx.Values._generatedTLS.bundle }}
  {{- else if eq $ctx.Values.tls.source "secret" }}
  caBundle: {{ required "tls.caBundle is required with tls.source=secret" $ctx.Values.tls.caBundle }}
  {{- end }}
{{- end }}

{{/* Only VMs that reference an instance type or preference, now or in the stored object. */}}
{{- define "itw.vmMatchConditions" -}}
{{- if and .Values.webhook.matchConditions (semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version) }}
matchConditions:
  - name: references-an-instancetype-or-preference
    expression: >-
      (has(object.spec) && (has(object.spec.instancetype) || has(object.spec.preference))) ||
      (has(object.metadata) && has(object.metadata.annotations) &&
      'instancetype-webhook.kubevirt.io/policy' in object.metadata.annotations) ||
      (request.operation == 'UPDATE' && has(oldObject.spec) &&
      (has(oldObject.spec.instancetype) || has(oldObject.spec.preference)))
{{- end }}
{{- end }}

{{- define "itw.webhookAnnotations" -}}
{{- if eq .Values.tls.source "cert-manager" }}
annotations:
  {{- with .Values.tls.certManager.caBundleSecret }}
  cert-manager.io/inject-ca-from-secret: {{ printf "%s/%s" $.Release.Namespace . }}
  {{- else }}
  cert-manager.io/inject-ca-from: {{ printf "%s/%s" .Release.Namespace (include "itw.certificateName" .) }}
  {{- end }}
{{- end }}
{{- end }}

{{/* The sweep (audit/sweep of stored VMs): its own labels, ServiceAccount and pod template. */}}
{{- define "itw.sweepName" -}}
{{- printf "%s-sweep" (include "itw.fullname" .) | trunc 52 | trimSuffix "-" }}
{{- end }}

{{- define "itw.sweepLabels" -}}
helm.sh/chart: {{ include "itw.chart" . }}
app.kubernetes.io/name: {{ include "itw.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: sweep
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: instancetype-webhook
{{- end }}

{{- define "itw.sweepServiceAccountName" -}}
{{- default (include "itw.sweepName" .) .Values.sweep.serviceAccount.name }}
{{- end }}

{{/* The Job spec both the CronJob and the post-install/post-upgrade hook run: `instancetype-webhook
sweep` over every namespace; with shards > 1 an Indexed Job whose pods take shard JOB_COMPLETION_INDEX
of N. Exit 1 (VMs refused or unresolved: reported, nothing to retry) fails the Job at once; other
failures are retried up to backoffLimit. */}}
{{- define "itw.sweepJobSpec" -}}
{{- $shards := int .Values.sweep.shards }}
backoffLimit: {{ .Values.sweep.backoffLimit }}
{{- with .Values.sweep.activeDeadlineSeconds }}
activeDeadlineSeconds: {{ . }}
{{- end }}
{{- if gt $shards 1 }}
completionMode: Indexed
completions: {{ $shards }}
parallelism: {{ $shards }}
{{- end }}
podFailurePolicy:
  rules:
    - action: FailJob
      onExitCodes:
        containerName: sweep
        operator: In
        values: [1]
template:
  metadata:
    labels:
      {{- include "itw.sweepLabels" . | nindent 6 }}
  spec:
    serviceAccountName: {{ include "itw.sweepServiceAccountName" . }}
    restartPolicy: Never
    {{- with .Values.imagePullSecrets }}
    imagePullSecrets:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    securityContext:
      {{- toYaml .Values.podSecurityContext | nindent 6 }}
    {{- with .Values.nodeSelector }}
    nodeSelector:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.tolerations }}
    tolerations:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    containers:
      - name: sweep
        image: {{ include "itw.image" . | quote }}
        imagePullPolicy: {{ .Values.image.pullPolicy }}
        command: ["instancetype-webhook", "sweep"]
        args:
          - --in-cluster
          - --all-namespaces
          - --policy={{ default .Values.policy .Values.sweep.policy }}
          - --concurrency={{ .Values.sweep.concurrency }}
          - --rate={{ .Values.sweep.rate }}
          - --output=json
          - --progress=never
          {{- if gt $shards 1 }}
          - --shard=job/{{ $shards }}
          {{- end }}
          {{- if .Values.sweep.dryRun }}
          - --dry-run
          {{- end }}
          {{- if .Values.sweep.events }}
          - --events
          {{- end }}
          {{- if .Values.allowVMPolicyOverride }}
          - --allow-vm-policy
          {{- end }}
          {{- if .Values.preserveGuest }}
          - --preserve-guest
          {{- end }}
          {{- range .Values.sweep.extraArgs }}
          - {{ . | quote }}
          {{- end }}
        {{- with .Values.extraEnv }}
        env:
          {{- toYaml . | nindent 10 }}
        {{- end }}
        securityContext:
          {{- toYaml .Values.securityContext | nindent 10 }}
        resources:
          {{- toYaml .Values.sweep.resources | nindent 10 }}
{{- end }}

{{/* The scheduled audit: its own labels, ServiceAccount and the report API it writes. */}}
{{- define "itw.auditName" -}}
{{- printf "%s-audit" (include "itw.fullname" .) | trunc 52 | trimSuffix "-" }}
{{- end }}

{{- define "itw.auditLabels" -}}
helm.sh/chart: {{ include "itw.chart" . }}
app.kubernetes.io/name: {{ include "itw.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: audit
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: instancetype-webhook
{{- end }}

{{- define "itw.auditServiceAccountName" -}}
{{- default (include "itw.auditName" .) .Values.audit.serviceAccount.name }}
{{- end }}
