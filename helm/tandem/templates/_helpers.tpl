{{/* Names and labels. */}}
{{- define "tandem.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tandem.fullname" -}}
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

{{- define "tandem.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "tandem.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: gateway, redis or vllm. */}}
{{- define "tandem.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tandem.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "tandem.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "tandem.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "tandem.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* Whether more than one gateway process can serve at once. */}}
{{- define "tandem.scalesOut" -}}
{{- if or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled (gt (int .Values.workers) 1) -}}true{{- end -}}
{{- end -}}

{{/* Whether the chart runs its own Redis. */}}
{{- define "tandem.redisDeployed" -}}
{{- if and (not .Values.redis.externalUrl) (or (include "tandem.scalesOut" .) .Values.redis.alwaysDeploy) -}}true{{- end -}}
{{- end -}}

{{- define "tandem.redisUrl" -}}
{{- if .Values.redis.externalUrl -}}
{{- .Values.redis.externalUrl -}}
{{- else if include "tandem.redisDeployed" . -}}
{{- printf "redis://%s-redis:6379/0" (include "tandem.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* Whether the chart's own Redis asks for a password (the URL then comes from a Secret). */}}
{{- define "tandem.redisAuth" -}}
{{- if and (include "tandem.redisDeployed" .) .Values.redis.auth.enabled -}}true{{- end -}}
{{- end -}}

{{- define "tandem.redisSecretName" -}}
{{- default (printf "%s-redis" (include "tandem.fullname" .)) .Values.redis.auth.existingSecret -}}
{{- end -}}

{{- define "tandem.vaultSecretName" -}}
{{- default (printf "%s-vault" (include "tandem.fullname" .)) .Values.vaultKey.secretName -}}
{{- end -}}

{{/* A random value kept across upgrades: the one already in the Secret when there is one. */}}
{{- define "tandem.keptRandom" -}}
{{- $existing := lookup "v1" "Secret" .root.Release.Namespace .name -}}
{{- if and $existing (hasKey (default dict $existing.data) .key) -}}
{{- index $existing.data .key -}}
{{- else if .bytes -}}
{{- /* `bytes` random bytes, base64 (what the vault key is), as Secret data (base64 again) */ -}}
{{- randBytes .bytes | b64enc -}}
{{- else -}}
{{- randAlphaNum .length | b64enc -}}
{{- end -}}
{{- end -}}

{{/* The gateway's tandem.yaml: the user's config plus what the chart decides. */}}
{{- define "tandem.config" -}}
{{- $config := deepCopy .Values.config -}}
{{- $upstreams := default dict $config.upstreams -}}
{{- $edge := default dict (get $upstreams "edge") -}}
{{- if .Values.vllm.enabled -}}
{{- $name := include "tandem.fullname" . -}}
{{- $port := int .Values.vllm.port -}}
{{- if gt (int .Values.vllm.replicas) 1 -}}
{{- $endpoints := list -}}
{{- range $i := until (int .Values.vllm.replicas) -}}
{{- $endpoints = append $endpoints (printf "http://%s-vllm-%d.%s-vllm-pods.%s.svc:%d/v1" $name $i $name $.Release.Namespace $port) -}}
{{- end -}}
{{- $_ := set $edge "endpoints" $endpoints -}}
{{- $_ := unset $edge "base_url" -}}
{{- else -}}
{{- /* The chart's one vLLM is the edge: endpoints left in `config` name other servers. */ -}}
{{- $_ := set $edge "base_url" (printf "http://%s-vllm:%d/v1" $name $port) -}}
{{- $_ := unset $edge "endpoints" -}}
{{- end -}}
{{- $_ := set $edge "model" .Values.vllm.servedModelName -}}
{{- else if get $edge "endpoints" -}}
{{- /* An external pool. Helm merges values.yaml's default base_url into the user's edge; the
gateway refuses a base_url that is not one of endpoints, so it is dropped unless it is one (the
gateway then takes the first endpoint). */ -}}
{{- if not (has (get $edge "base_url") (get $edge "endpoints")) -}}
{{- $_ := unset $edge "base_url" -}}
{{- end -}}
{{- else if not (get $edge "base_url") -}}
{{- fail "config.upstreams.edge.base_url is required when vllm.enabled is false, unless config.upstreams.edge.endpoints lists the replicas of an edge pool (point it at your vLLM server, e.g. http://vllm:8000/v1)" -}}
{{- end -}}
{{- $_ := set $upstreams "edge" $edge -}}
{{- $_ := set $config "upstreams" $upstreams -}}
{{- $_ := set $config "server" (dict "host" "0.0.0.0" "port" 8080 "workers" (int .Values.workers) "insecure_open_proxy" .Values.insecureOpenProxy) -}}
{{- $redis := include "tandem.redisUrl" . -}}
{{- if and $redis (not (include "tandem.redisAuth" .)) -}}
{{- $_ := set $config "redis_url" $redis -}}
{{- end -}}
{{- if .Values.outageJournal.enabled -}}
{{- $trajectories := default dict $config.trajectories -}}
{{- $_ := set $trajectories "outage_journal_dir" .Values.outageJournal.mountPath -}}
{{- $_ := set $trajectories "outage_journal_max_bytes" (int .Values.outageJournal.maxBytes) -}}
{{- $_ := set $config "trajectories" $trajectories -}}
{{- end -}}
{{- if .Values.clientKeys.secretName -}}
{{- $_ := set $config "client_api_keys_file" (printf "/etc/tandem/client-keys/%s" .Values.clientKeys.key) -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}

{{/* Checks the schema cannot say clearly; every template that renders includes it once. */}}
{{- define "tandem.validate" -}}
{{- range $key := list "server" "redis_url" -}}
{{- if hasKey $.Values.config $key -}}
{{- fail (printf "config.%s is set by the chart: use workers / service.port, or redis.externalUrl, instead" $key) -}}
{{- end -}}
{{- end -}}
{{- range $name, $tag := dict "image.tag" $.Values.image.tag "redis.image.tag" $.Values.redis.image.tag "vllm.image.tag" $.Values.vllm.image.tag -}}
{{- if eq $tag "latest" -}}
{{- fail (printf "%s must pin a version, not latest" $name) -}}
{{- end -}}
{{- end -}}
{{- range $key := list "client_api_keys" "admin_api_keys" -}}
{{- if hasKey $.Values.config $key -}}
{{- fail (printf "config.%s would put keys into a ConfigMap: use clientKeys / adminKeys (existing Secrets) instead" $key) -}}
{{- end -}}
{{- end -}}
{{- range $name, $upstream := (default dict $.Values.config.upstreams) -}}
{{- if hasKey (default dict $upstream) "api_key" -}}
{{- fail (printf "config.upstreams.%s.api_key would put a key into a ConfigMap: set api_key_env and pass the key with secretEnv" $name) -}}
{{- end -}}
{{- end -}}
{{- if $.Values.judgeTraining.enabled -}}
{{- if not $.Values.adminKeys.secretName -}}
{{- fail "judgeTraining needs adminKeys.secretName: the job exports the judge rows through the gateway's admin API" -}}
{{- end -}}
{{- if not $.Values.judgeTraining.modelVolume.claimName -}}
{{- fail "judgeTraining.modelVolume.claimName is required: a PVC that the job promotes models into and the gateway reads them from" -}}
{{- end -}}
{{- if and (eq $.Values.judgeTraining.workVolume.type "persistentVolumeClaim") (not $.Values.judgeTraining.workVolume.claimName) -}}
{{- fail "judgeTraining.workVolume.claimName is required when judgeTraining.workVolume.type is persistentVolumeClaim" -}}
{{- end -}}
{{- if and $.Values.judgeTraining.teacher.url (not $.Values.judgeTraining.teacher.model) -}}
{{- fail "judgeTraining.teacher.model is required when judgeTraining.teacher.url is set" -}}
{{- end -}}
{{- if eq $.Values.judgeTraining.image.tag "latest" -}}
{{- fail "judgeTraining.image.tag must pin a version, not latest" -}}
{{- end -}}
{{- end -}}
{{- if not (or $.Values.clientKeys.secretName $.Values.insecureOpenProxy) -}}
{{- fail "clientKeys.secretName is required: the gateway listens on the pod network and spends the upstream keys for anyone who reaches it. Name a Secret of client keys (one a line), or set insecureOpenProxy: true if something in front of the Service authenticates" -}}
{{- end -}}
{{- if and $.Values.autoscaling.enabled (gt (int $.Values.autoscaling.minReplicas) (int $.Values.autoscaling.maxReplicas)) -}}
{{- fail (printf "autoscaling.minReplicas (%d) is above autoscaling.maxReplicas (%d)" (int $.Values.autoscaling.minReplicas) (int $.Values.autoscaling.maxReplicas)) -}}
{{- end -}}
{{- end -}}

{{/* The judge-training CronJob's image: the gateway image's `-train` build unless named. */}}
{{- define "tandem.trainingImage" -}}
{{- $jt := .Values.judgeTraining -}}
{{- $repository := default .Values.image.repository $jt.image.repository -}}
{{- $tag := default (printf "%s-train" (default .Chart.AppVersion .Values.image.tag)) $jt.image.tag -}}
{{- printf "%s:%s" $repository $tag -}}
{{- end -}}

{{/* The file the judge-training CronJob promotes into (and a judge route's `model`). */}}
{{- define "tandem.judgeModelFile" -}}
{{- printf "%s/%s" .Values.judgeTraining.modelVolume.mountPath (ternary "judge-draft.onnx" "judge.onnx" (eq .Values.judgeTraining.sees "draft")) -}}
{{- end -}}

{{/* The chart's Redis' --maxmemory: redis.maxmemory as given, else redis.maxmemoryPercent of its
memory limit in bytes (a Kubernetes quantity: 512Mi, 1G, or a number of bytes); empty without
either (no limit, no maxmemory). */}}
{{- define "tandem.redisMaxmemory" -}}
{{- $redis := .Values.redis -}}
{{- $limit := get (default dict (default dict $redis.resources).limits) "memory" -}}
{{- if and (kindIs "string" $redis.maxmemory) $redis.maxmemory -}}
{{- $redis.maxmemory -}}
{{- else if $redis.maxmemory -}}
{{- /* a number of bytes: Helm reads it as a float, which would print as 4.194304e+08 */ -}}
{{- printf "%d" (int64 $redis.maxmemory) -}}
{{- else if $limit -}}
{{- $bytes := 0.0 -}}
{{- if kindIs "string" $limit -}}
{{- $number := regexFind "^[0-9.]+([eE][0-9]+)?" $limit -}}
{{- $units := dict "" 1.0 "n" 1e-9 "u" 1e-6 "m" 0.001 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "P" 1e15 "E" 1e18 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 -}}
{{- $bytes = mulf (float64 $number) (get $units (trimPrefix $number $limit)) -}}
{{- else -}}
{{- $bytes = float64 $limit -}}
{{- end -}}
{{- $maxmemory := int64 (floor (divf (mulf $bytes (float64 $redis.maxmemoryPercent)) 100)) -}}
{{- if gt $maxmemory 0 -}}
{{- /* (0 would be Redis' "no limit") */ -}}
{{- printf "%d" $maxmemory -}}
{{- end -}}
{{- end -}}
{{- end -}}
