package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	chschema "github.com/hindsight-memory/hindsight/schema/clickhouse"
)

const manifestDir = "kubernetes"

// byHand are the manifests that kustomization.yaml leaves out on purpose
// (its comments say why); every other manifest must be listed in it.
var byHand = map[string]bool{
	"secret.example.yaml": true,
	"migrate-job.yaml":    true,
}

// kustomization models the fields of kustomization.yaml this deployment
// uses. It is decoded strictly: a field it does not model fails the test,
// so that a new kustomize feature is added here, and checked, on purpose.
type kustomization struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Namespace  string           `json:"namespace"`
	Resources  []string         `json:"resources"`
	Images     []kustomizeImage `json:"images"`
}

type kustomizeImage struct {
	Name    string `json:"name"`
	NewName string `json:"newName,omitempty"`
	NewTag  string `json:"newTag,omitempty"`
	Digest  string `json:"digest,omitempty"`
}

// bundle is every manifest in deploy/kubernetes, decoded into the
// Kubernetes API types, indexed by kind.
type bundle struct {
	kust    kustomization
	files   map[string][]runtime.Object // file name -> objects in it
	objects []runtime.Object

	configMaps  map[string]*corev1.ConfigMap
	secrets     map[string]*corev1.Secret
	accounts    map[string]*corev1.ServiceAccount
	deployments []*appsv1.Deployment
	services    []*corev1.Service
	budgets     []*policyv1.PodDisruptionBudget
	policies    []*networkingv1.NetworkPolicy
	jobs        []*batchv1.Job
}

// strictDecoder decodes YAML manifests into the API types of the groups the
// deployment uses, rejecting unknown and duplicate fields: the same strict
// field validation the API server applies to `kubectl apply --validate=strict`.
func strictDecoder(t *testing.T) runtime.Decoder {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme,
		policyv1.AddToScheme, networkingv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme,
		kjson.SerializerOptions{Yaml: true, Strict: true})
}

// loadBundle reads and strictly decodes every manifest; any decoding error
// is fatal, because the invariants below would be checked on wrong data.
func loadBundle(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{
		files:      map[string][]runtime.Object{},
		configMaps: map[string]*corev1.ConfigMap{},
		secrets:    map[string]*corev1.Secret{},
		accounts:   map[string]*corev1.ServiceAccount{},
	}
	kust := readFile(t, filepath.Join(manifestDir, "kustomization.yaml"))
	if err := yaml.UnmarshalStrict(kust, &b.kust); err != nil {
		t.Fatalf("kustomization.yaml: %v (a field this test does not model must be added to the kustomization type)", err)
	}

	names, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := strictDecoder(t)
	for _, path := range names {
		file := filepath.Base(path)
		if file == "kustomization.yaml" {
			continue
		}
		docs, err := splitDocuments(readFile(t, path))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(docs) == 0 {
			t.Fatalf("%s holds no object", file)
		}
		for i, doc := range docs {
			obj, _, err := dec.Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("%s, document %d: %v", file, i+1, err)
			}
			b.add(t, file, obj)
		}
	}
	return b
}

// splitDocuments splits a multi-document YAML file, dropping documents that
// hold only comments.
func splitDocuments(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if string(bytes.TrimSpace(j)) != "null" {
			docs = append(docs, doc)
		}
	}
}

func (b *bundle) add(t *testing.T, file string, obj runtime.Object) {
	t.Helper()
	b.files[file] = append(b.files[file], obj)
	b.objects = append(b.objects, obj)
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		b.configMaps[o.Name] = o
	case *corev1.Secret:
		b.secrets[o.Name] = o
	case *corev1.ServiceAccount:
		b.accounts[o.Name] = o
	case *appsv1.Deployment:
		b.deployments = append(b.deployments, o)
	case *corev1.Service:
		b.services = append(b.services, o)
	case *policyv1.PodDisruptionBudget:
		b.budgets = append(b.budgets, o)
	case *networkingv1.NetworkPolicy:
		b.policies = append(b.policies, o)
	case *batchv1.Job:
		b.jobs = append(b.jobs, o)
	case *corev1.Namespace:
	default:
		t.Fatalf("%s: %T is not a kind this test checks; add its invariants before using it", file, obj)
	}
}

// workload is a pod template and what owns it.
type workload struct {
	name     string // e.g. Deployment/hindsight-worker
	spec     corev1.PodSpec
	labels   map[string]string
	serving  bool // long-running: its containers need probes
	replicas int32
}

func (b *bundle) workloads() []workload {
	var ws []workload
	for _, d := range b.deployments {
		replicas := int32(1)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		ws = append(ws, workload{"Deployment/" + d.Name, d.Spec.Template.Spec, d.Spec.Template.Labels, true, replicas})
	}
	for _, j := range b.jobs {
		ws = append(ws, workload{"Job/" + j.Name + j.GenerateName, j.Spec.Template.Spec, j.Spec.Template.Labels, false, 1})
	}
	return ws
}

func objectMeta(obj runtime.Object) metav1.Object {
	m, ok := obj.(metav1.Object)
	if !ok {
		panic(fmt.Sprintf("%T has no ObjectMeta", obj))
	}
	return m
}

func kindName(obj runtime.Object) string {
	m := objectMeta(obj)
	return reflect.TypeOf(obj).Elem().Name() + "/" + m.GetName() + m.GetGenerateName()
}

func TestKustomization(t *testing.T) {
	b := loadBundle(t)
	k := b.kust
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Errorf("kustomization.yaml: apiVersion/kind = %s/%s, want kustomize.config.k8s.io/v1beta1/Kustomization", k.APIVersion, k.Kind)
	}
	if k.Namespace == "" {
		t.Error("kustomization.yaml sets no namespace")
	}

	listed := map[string]bool{}
	for _, r := range k.Resources {
		if listed[r] {
			t.Errorf("kustomization.yaml lists %s twice", r)
		}
		listed[r] = true
		if byHand[r] {
			t.Errorf("kustomization.yaml lists %s, which must be applied by hand (see its comment)", r)
		}
		if _, ok := b.files[r]; !ok {
			t.Errorf("kustomization.yaml lists %s, which is not a manifest in deploy/kubernetes", r)
		}
	}
	for file := range b.files {
		if !listed[file] && !byHand[file] {
			t.Errorf("%s is neither in kustomization.yaml nor one of the manifests applied by hand %v", file, keys(byHand))
		}
	}
	for file := range byHand {
		if _, ok := b.files[file]; !ok {
			t.Errorf("%s, applied by hand, is missing", file)
		}
	}

	// kustomize rewrites the namespace; the files carry it too so that the
	// by-hand manifests land in the same place. They must agree.
	for _, obj := range b.objects {
		m := objectMeta(obj)
		if ns, ok := obj.(*corev1.Namespace); ok {
			if ns.Name != k.Namespace {
				t.Errorf("Namespace %s differs from kustomization namespace %s", ns.Name, k.Namespace)
			}
			continue
		}
		if m.GetNamespace() != k.Namespace {
			t.Errorf("%s is in namespace %q, want %q", kindName(obj), m.GetNamespace(), k.Namespace)
		}
	}

	if len(k.Images) == 0 {
		t.Error("kustomization.yaml sets no image: the tag of the hindsight image must be settable with `kustomize edit set image`")
	}
	for _, img := range k.Images {
		if img.NewTag == "" && img.Digest == "" {
			t.Errorf("kustomization image %s sets neither newTag nor digest", img.Name)
		}
		if img.NewTag == "latest" {
			t.Errorf("kustomization image %s uses the tag latest; pin a version", img.Name)
		}
	}
}

func TestManifestNames(t *testing.T) {
	b := loadBundle(t)
	for _, obj := range b.objects {
		m := objectMeta(obj)
		name := m.GetName()
		if name == "" {
			// A Job created with generateName gets a random suffix.
			name = m.GetGenerateName() + "x"
		}
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			t.Errorf("%s: name: %s", kindName(obj), msg)
		}
		for k, v := range m.GetLabels() {
			for _, msg := range validation.IsQualifiedName(k) {
				t.Errorf("%s: label key %q: %s", kindName(obj), k, msg)
			}
			for _, msg := range validation.IsValidLabelValue(v) {
				t.Errorf("%s: label %s value %q: %s", kindName(obj), k, v, msg)
			}
		}
	}
	for _, w := range b.workloads() {
		for _, c := range allContainers(w.spec) {
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				t.Errorf("%s: container name %q: %s", w.name, c.Name, msg)
			}
			for _, p := range c.Ports {
				for _, msg := range validation.IsValidPortName(p.Name) {
					t.Errorf("%s: container %s: port name %q: %s", w.name, c.Name, p.Name, msg)
				}
			}
		}
	}
}

func allContainers(spec corev1.PodSpec) []corev1.Container {
	return append(slices.Clone(spec.InitContainers), spec.Containers...)
}

// TestWorkloads checks every pod template: the restricted Pod Security
// profile, resources, a pinned image of the one binary, a production
// subcommand, environment variables from the contract whose ConfigMap and
// Secret references resolve, and mounts that resolve.
func TestWorkloads(t *testing.T) {
	b := loadBundle(t)
	ws := b.workloads()
	if len(ws) == 0 {
		t.Fatal("no workloads")
	}
	seen := map[string]bool{}
	for _, w := range ws {
		spec := w.spec
		if spec.ServiceAccountName == "" || b.accounts[spec.ServiceAccountName] == nil {
			t.Errorf("%s: service account %q is not defined", w.name, spec.ServiceAccountName)
		}
		if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
			t.Errorf("%s: automountServiceAccountToken must be false: Hindsight never calls the Kubernetes API", w.name)
		}
		psc := spec.SecurityContext
		if psc == nil {
			t.Errorf("%s: no pod securityContext", w.name)
			psc = &corev1.PodSecurityContext{}
		}
		if psc.RunAsUser == nil || *psc.RunAsUser != imageUser {
			t.Errorf("%s: pod runAsUser must be %d, the image's user", w.name, imageUser)
		}
		if psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: pod seccompProfile must be RuntimeDefault (restricted Pod Security profile)", w.name)
		}
		if len(spec.Containers) == 0 {
			t.Errorf("%s: no containers", w.name)
		}
		for _, c := range spec.InitContainers {
			checkContainer(t, b, w, c)
			if len(c.Args) == 0 || c.Args[0] != "migrate" {
				t.Errorf("%s: init container %s must run migrate, runs %v", w.name, c.Name, c.Args)
			}
		}
		for _, c := range spec.Containers {
			checkContainer(t, b, w, c)
			if w.serving {
				checkServing(t, b, w, c)
			}
			if len(c.Args) > 0 {
				seen[c.Args[0]] = true
			}
		}
		checkVolumes(t, b, w)
	}
	for cmd := range subcommands {
		if !seen[cmd] {
			t.Errorf("no workload runs `hindsight %s`", cmd)
		}
	}
}

func checkContainer(t *testing.T, b *bundle, w workload, c corev1.Container) {
	where := w.name + " container " + c.Name

	// One image, pinned, whose tag kustomize can set.
	name, tag := splitImage(c.Image)
	switch {
	case c.Image == "":
		t.Errorf("%s: no image", where)
	case tag == "" || tag == "latest":
		t.Errorf("%s: image %q must be pinned to a version or digest", where, c.Image)
	}
	if !slices.ContainsFunc(b.kust.Images, func(i kustomizeImage) bool { return i.Name == name }) {
		t.Errorf("%s: image %s has no entry in kustomization.yaml images", where, name)
	}
	if len(c.Command) != 0 {
		t.Errorf("%s: sets command %v; use args, the image's entrypoint is the hindsight binary", where, c.Command)
	}
	if len(c.Args) == 0 || !subcommands[c.Args[0]] {
		t.Errorf("%s: args %v do not start with a production subcommand %v", where, c.Args, keys(subcommands))
	}

	// Restricted Pod Security profile, and a read-only root file system.
	sc := c.SecurityContext
	if sc == nil {
		t.Errorf("%s: no securityContext", where)
		sc = &corev1.SecurityContext{}
	}
	nonRoot := sc.RunAsNonRoot
	if nonRoot == nil && w.spec.SecurityContext != nil {
		nonRoot = w.spec.SecurityContext.RunAsNonRoot
	}
	if nonRoot == nil || !*nonRoot {
		t.Errorf("%s: runAsNonRoot must be true", where)
	}
	if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		t.Errorf("%s: runs as root", where)
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Errorf("%s: privileged", where)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation must be false", where)
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("%s: readOnlyRootFilesystem must be true", where)
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("%s: capabilities must drop ALL and add none", where)
	}

	// Requests and limits for CPU and memory, requests within limits.
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, hasReq := c.Resources.Requests[res]
		lim, hasLim := c.Resources.Limits[res]
		if !hasReq || !hasLim {
			t.Errorf("%s: resources must set both a request and a limit for %s", where, res)
			continue
		}
		if req.Cmp(lim) > 0 {
			t.Errorf("%s: %s request %s exceeds its limit %s", where, res, req.String(), lim.String())
		}
	}

	checkEnv(t, b, where, c)
}

// splitImage splits an image reference into its name and its tag or digest.
func splitImage(ref string) (name, tag string) {
	if i := strings.Index(ref, "@"); i >= 0 {
		return ref[:i], ref[i+1:]
	}
	slash := strings.LastIndex(ref, "/")
	if i := strings.LastIndex(ref, ":"); i > slash {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

func checkEnv(t *testing.T, b *bundle, where string, c corev1.Container) {
	for _, from := range c.EnvFrom {
		switch {
		case from.ConfigMapRef != nil:
			cm := b.configMaps[from.ConfigMapRef.Name]
			if cm == nil {
				t.Errorf("%s: envFrom ConfigMap %q is not defined", where, from.ConfigMapRef.Name)
				continue
			}
			for k := range cm.Data {
				if !knownEnv[k] {
					t.Errorf("%s: ConfigMap %s sets %s, which hindsight does not read", where, cm.Name, k)
				}
				if secretEnv[k] {
					t.Errorf("%s: ConfigMap %s holds the credential %s; it belongs in the Secret", where, cm.Name, k)
				}
			}
		case from.SecretRef != nil:
			t.Errorf("%s: envFrom Secret %s: reference each secret key explicitly, so that the manifest says which credentials a process gets", where, from.SecretRef.Name)
		}
	}
	names := map[string]bool{}
	for _, e := range c.Env {
		if names[e.Name] {
			t.Errorf("%s: %s is set twice", where, e.Name)
		}
		names[e.Name] = true
		if !knownEnv[e.Name] {
			t.Errorf("%s: sets %s, which hindsight does not read", where, e.Name)
		}
		if secretEnv[e.Name] && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
			t.Errorf("%s: the credential %s must come from a Secret (secretKeyRef)", where, e.Name)
		}
		if e.ValueFrom == nil {
			continue
		}
		switch vf := e.ValueFrom; {
		case vf.SecretKeyRef != nil:
			// Resolved even when optional: a misspelt key would otherwise
			// silently leave the variable unset.
			s := b.secrets[vf.SecretKeyRef.Name]
			if s == nil {
				t.Errorf("%s: %s: Secret %q is not defined", where, e.Name, vf.SecretKeyRef.Name)
			} else if !secretHasKey(s, vf.SecretKeyRef.Key) {
				t.Errorf("%s: %s: Secret %s has no key %q", where, e.Name, s.Name, vf.SecretKeyRef.Key)
			}
		case vf.ConfigMapKeyRef != nil:
			cm := b.configMaps[vf.ConfigMapKeyRef.Name]
			if cm == nil {
				t.Errorf("%s: %s: ConfigMap %q is not defined", where, e.Name, vf.ConfigMapKeyRef.Name)
			} else if _, ok := cm.Data[vf.ConfigMapKeyRef.Key]; !ok {
				t.Errorf("%s: %s: ConfigMap %s has no key %q", where, e.Name, cm.Name, vf.ConfigMapKeyRef.Key)
			}
		case vf.ResourceFieldRef != nil:
			if e.Name != "GOMEMLIMIT" || vf.ResourceFieldRef.Resource != "limits.memory" {
				t.Errorf("%s: %s from %s: only GOMEMLIMIT from limits.memory is expected", where, e.Name, vf.ResourceFieldRef.Resource)
			}
		default:
			t.Errorf("%s: %s: unexpected valueFrom source", where, e.Name)
		}
	}

	required := map[string][]string{
		"migrate": {"CLICKHOUSE_ADDR", "CLICKHOUSE_PASSWORD"},
		"worker":  {"TEMPORAL_ADDR", "CLICKHOUSE_ADDR", "CLICKHOUSE_PASSWORD", "MILVUS_ADDR", "HINDSIGHT_HEALTH_ADDR"},
		"mcp":     {"TEMPORAL_ADDR", "CLICKHOUSE_ADDR", "CLICKHOUSE_PASSWORD", "MILVUS_ADDR", "HINDSIGHT_MCP_ADDR"},
	}
	if len(c.Args) > 0 {
		for _, name := range required[c.Args[0]] {
			if !envSet(b, c, name) {
				t.Errorf("%s: hindsight %s needs %s", where, c.Args[0], name)
			}
		}
	}
}

func secretHasKey(s *corev1.Secret, key string) bool {
	_, inString := s.StringData[key]
	_, inData := s.Data[key]
	return inString || inData
}

func envSet(b *bundle, c corev1.Container, name string) bool {
	if slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name }) {
		return true
	}
	_, ok := envValue(b, c, name)
	return ok
}

// envValue returns the literal value a container sees for name, from its
// env (which wins, as in Kubernetes) or from an envFrom ConfigMap.
func envValue(b *bundle, c corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name != name {
			continue
		}
		if e.ValueFrom == nil {
			return e.Value, true
		}
		if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil && b.configMaps[ref.Name] != nil {
			v, ok := b.configMaps[ref.Name].Data[ref.Key]
			return v, ok
		}
		return "", false
	}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef == nil || b.configMaps[from.ConfigMapRef.Name] == nil {
			continue
		}
		if v, ok := b.configMaps[from.ConfigMapRef.Name].Data[name]; ok {
			return v, true
		}
	}
	return "", false
}

// checkServing checks a long-running container: liveness and readiness
// probes on the port the process listens on, and, for the MCP server, the
// token file it requires when it listens beyond loopback.
func checkServing(t *testing.T, b *bundle, w workload, c corev1.Container) {
	where := w.name + " container " + c.Name
	addrVar := map[string]string{"worker": "HINDSIGHT_HEALTH_ADDR", "mcp": "HINDSIGHT_MCP_ADDR"}[c.Args[0]]
	if addrVar == "" {
		t.Errorf("%s: `hindsight %s` is not a serving command", where, c.Args[0])
		return
	}
	addr, ok := envValue(b, c, addrVar)
	if !ok {
		t.Errorf("%s: %s must be set literally (it decides the probe port)", where, addrVar)
		return
	}
	port, loopback, err := listenPort(addr)
	if err != nil {
		t.Errorf("%s: %s=%q: %v", where, addrVar, addr, err)
		return
	}
	if loopback {
		t.Errorf("%s: %s=%q listens on loopback only; probes and the Service cannot reach it", where, addrVar, addr)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return int(p.ContainerPort) == port }) {
		t.Errorf("%s: listens on %d (%s) but declares no such containerPort", where, port, addrVar)
	}

	probes := []struct {
		kind  string
		probe *corev1.Probe
		path  string
	}{
		{"liveness", c.LivenessProbe, "/healthz"},
		{"readiness", c.ReadinessProbe, "/readyz"},
		{"startup", c.StartupProbe, "/healthz"},
	}
	for _, p := range probes {
		if p.probe == nil {
			if p.kind != "startup" {
				t.Errorf("%s: no %s probe", where, p.kind)
			}
			continue
		}
		get := p.probe.HTTPGet
		if get == nil {
			t.Errorf("%s: %s probe must be an HTTP GET of %s", where, p.kind, p.path)
			continue
		}
		if get.Path != p.path {
			t.Errorf("%s: %s probe path %q, want %q", where, p.kind, get.Path, p.path)
		}
		got, err := containerPort(c, get.Port)
		if err != nil {
			t.Errorf("%s: %s probe: %v", where, p.kind, err)
		} else if got != port {
			t.Errorf("%s: %s probe on port %d, but %s=%q listens on %d", where, p.kind, got, addrVar, addr, port)
		}
	}

	if c.Args[0] != "mcp" {
		return
	}
	if w.replicas < 2 {
		t.Errorf("%s: %d replica(s); the MCP server needs 2 to survive a node drain", where, w.replicas)
	}
	tokens, ok := envValue(b, c, "HINDSIGHT_TOKENS_FILE")
	if !ok || tokens == "" {
		t.Errorf("%s: listens on %q but sets no HINDSIGHT_TOKENS_FILE; the server refuses to start without it", where, addr)
		return
	}
	if err := tokensFromSecret(b, w, c, tokens); err != nil {
		t.Errorf("%s: HINDSIGHT_TOKENS_FILE=%s: %v", where, tokens, err)
	}
}

// tokensFromSecret checks that path is a file projected from a Secret key
// that exists.
func tokensFromSecret(b *bundle, w workload, c corev1.Container, path string) error {
	for _, m := range c.VolumeMounts {
		rel, err := filepath.Rel(m.MountPath, path)
		if err != nil || strings.HasPrefix(rel, "..") || rel == "." {
			continue
		}
		i := slices.IndexFunc(w.spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 || w.spec.Volumes[i].Secret == nil {
			return fmt.Errorf("mount %s is not a Secret volume", m.MountPath)
		}
		src := w.spec.Volumes[i].Secret
		s := b.secrets[src.SecretName]
		if s == nil {
			return fmt.Errorf("Secret %q is not defined", src.SecretName)
		}
		key := rel
		for _, item := range src.Items {
			if item.Path == rel {
				key = item.Key
			}
		}
		if !secretHasKey(s, key) {
			return fmt.Errorf("Secret %s has no key %q", s.Name, key)
		}
		if !m.ReadOnly {
			return fmt.Errorf("mount %s must be read-only", m.MountPath)
		}
		return nil
	}
	return errors.New("no volume is mounted there")
}

// containerPort resolves a named or numbered port of c.
func containerPort(c corev1.Container, port intstr.IntOrString) (int, error) {
	for _, p := range c.Ports {
		if (port.Type == intstr.String && p.Name == port.StrVal) ||
			(port.Type == intstr.Int && p.ContainerPort == port.IntVal) {
			return int(p.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("port %s is not a port of container %s", port.String(), c.Name)
}

func checkVolumes(t *testing.T, b *bundle, w workload) {
	volumes := map[string]corev1.Volume{}
	for _, v := range w.spec.Volumes {
		volumes[v.Name] = v
		if s := v.Secret; s != nil {
			secret := b.secrets[s.SecretName]
			if secret == nil {
				t.Errorf("%s: volume %s: Secret %q is not defined", w.name, v.Name, s.SecretName)
				continue
			}
			for _, item := range s.Items {
				if !secretHasKey(secret, item.Key) {
					t.Errorf("%s: volume %s: Secret %s has no key %q", w.name, v.Name, secret.Name, item.Key)
				}
			}
		}
	}
	for _, c := range allContainers(w.spec) {
		for _, m := range c.VolumeMounts {
			if _, ok := volumes[m.Name]; !ok {
				t.Errorf("%s container %s: mounts undefined volume %s", w.name, c.Name, m.Name)
			}
		}
	}
}

func TestDeploymentsAndTheirPeers(t *testing.T) {
	b := loadBundle(t)

	// selects returns the Deployments whose pods sel selects.
	selects := func(sel labels.Selector) []*appsv1.Deployment {
		var out []*appsv1.Deployment
		for _, d := range b.deployments {
			if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				out = append(out, d)
			}
		}
		return out
	}
	selector := func(ls *metav1.LabelSelector) labels.Selector {
		t.Helper()
		if ls == nil || (len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0) {
			t.Error("empty label selector: it would select every pod in the namespace")
			return labels.Nothing()
		}
		sel, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			t.Error(err)
			return labels.Nothing()
		}
		return sel
	}

	for _, d := range b.deployments {
		sel := selector(d.Spec.Selector)
		if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("Deployment %s: selector %s does not match its pod labels", d.Name, sel)
		}
		if others := selects(sel); len(others) != 1 {
			t.Errorf("Deployment %s: selector %s selects the pods of %d Deployments", d.Name, sel, len(others))
		}
	}

	var mcpService bool
	for _, s := range b.services {
		if len(s.Spec.Selector) == 0 {
			t.Errorf("Service %s has no selector", s.Name)
			continue
		}
		ds := selects(labels.SelectorFromSet(s.Spec.Selector))
		if len(ds) != 1 {
			t.Errorf("Service %s selects the pods of %d Deployments, want 1", s.Name, len(ds))
			continue
		}
		c := ds[0].Spec.Template.Spec.Containers[0]
		for _, p := range s.Spec.Ports {
			target := p.TargetPort
			if target.Type == intstr.Int && target.IntVal == 0 {
				target = intstr.FromInt32(p.Port)
			}
			if _, err := containerPort(c, target); err != nil {
				t.Errorf("Service %s port %s: %v", s.Name, p.Name, err)
			}
		}
		if len(c.Args) > 0 && c.Args[0] == "mcp" {
			mcpService = true
			// The MCP server is stateless over HTTP: any replica answers
			// any request, and affinity would only pin a busy client (or
			// every client behind one NAT) to one pod.
			if s.Spec.SessionAffinity != "" && s.Spec.SessionAffinity != corev1.ServiceAffinityNone || s.Spec.SessionAffinityConfig != nil {
				t.Errorf("Service %s sets session affinity %q: the MCP server is stateless, so requests must spread over every replica", s.Name, s.Spec.SessionAffinity)
			}
			if !slices.Contains(c.Args, "http") {
				t.Errorf("Service %s serves MCP pods that do not run over HTTP: %q", s.Name, c.Args)
			}
		}
	}
	if !mcpService {
		t.Error("no Service exposes the MCP server")
	}

	var mcpBudget bool
	for _, pdb := range b.budgets {
		ds := selects(selector(pdb.Spec.Selector))
		if len(ds) != 1 {
			t.Errorf("PodDisruptionBudget %s selects the pods of %d Deployments, want 1", pdb.Name, len(ds))
			continue
		}
		replicas := int32(1)
		if ds[0].Spec.Replicas != nil {
			replicas = *ds[0].Spec.Replicas
		}
		if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.Type != intstr.Int {
			t.Errorf("PodDisruptionBudget %s: set minAvailable as a number", pdb.Name)
		} else if pdb.Spec.MinAvailable.IntVal >= replicas {
			t.Errorf("PodDisruptionBudget %s: minAvailable %d with %d replicas would block every node drain",
				pdb.Name, pdb.Spec.MinAvailable.IntVal, replicas)
		}
		if args := ds[0].Spec.Template.Spec.Containers[0].Args; len(args) > 0 && args[0] == "mcp" {
			mcpBudget = true
		}
	}
	if !mcpBudget {
		t.Error("no PodDisruptionBudget protects the MCP server")
	}

	for _, np := range b.policies {
		ds := selects(selector(&np.Spec.PodSelector))
		if len(ds) == 0 {
			t.Errorf("NetworkPolicy %s selects no Hindsight pods", np.Name)
			continue
		}
		for _, rule := range np.Spec.Ingress {
			for _, p := range rule.Ports {
				if p.Port == nil {
					continue
				}
				for _, d := range ds {
					if _, err := containerPort(d.Spec.Template.Spec.Containers[0], *p.Port); err != nil {
						t.Errorf("NetworkPolicy %s admits a port Deployment %s does not serve: %v", np.Name, d.Name, err)
					}
				}
			}
		}
	}
}

// TestSecretTemplate keeps real credentials out of the repository: every
// value of the shipped Secret is empty or an obvious placeholder.
func TestSecretTemplate(t *testing.T) {
	b := loadBundle(t)
	if len(b.secrets) == 0 {
		t.Fatal("no Secret template")
	}
	for _, s := range b.secrets {
		if len(s.Data) > 0 {
			t.Errorf("Secret %s: use stringData with placeholders; base64 data hides what is committed", s.Name)
		}
		for k, v := range s.StringData {
			if v != "" && !strings.Contains(v, "CHANGE-ME") {
				t.Errorf("Secret %s: %s holds a value that is not a CHANGE-ME placeholder", s.Name, k)
			}
		}
	}
}

// TestConfigMapValues checks the shapes of the configuration values, so
// that a broken address fails here rather than in a crash-looping pod.
func TestConfigMapValues(t *testing.T) {
	b := loadBundle(t)
	if len(b.configMaps) == 0 {
		t.Fatal("no ConfigMap")
	}
	for _, cm := range b.configMaps {
		for k, v := range cm.Data {
			if err := checkSetting(k, v); err != nil {
				t.Errorf("ConfigMap %s: %s=%q: %v", cm.Name, k, v, err)
			}
		}
	}
}

// checkSetting validates one configuration value by the variable's meaning.
// Empty means unset, which is valid for every optional setting.
func checkSetting(name, value string) error {
	switch name {
	case "TEMPORAL_ADDR", "MILVUS_ADDR":
		return hostPort(value)
	case "CLICKHOUSE_ADDR":
		if strings.Contains(value, "://") {
			u, err := url.Parse(value)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return errors.New("want host:port or an http(s) URL")
			}
			return nil
		}
		return hostPort(value)
	case "OPENAI_BASE_URL":
		if value == "" {
			return nil
		}
		u, err := url.Parse(value)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New("want an http(s) URL or empty")
		}
	case "HINDSIGHT_EMBED_DIM":
		if value == "" {
			return nil
		}
		if n, err := strconv.Atoi(value); err != nil || n <= 0 {
			return errors.New("want a positive integer or empty")
		}
	case "CLICKHOUSE_CLUSTER":
		if value == "" {
			return nil
		}
		return chschema.ValidCluster(value)
	case "HINDSIGHT_LOG_LEVEL":
		if !slices.Contains([]string{"debug", "info", "warn", "error"}, value) {
			return errors.New("want debug, info, warn or error")
		}
	case "TEMPORAL_NAMESPACE", "HINDSIGHT_TASK_QUEUE", "CLICKHOUSE_DATABASE", "HINDSIGHT_TENANT":
		if value == "" {
			return errors.New("must not be empty")
		}
	}
	return nil
}

func hostPort(v string) error {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return err
	}
	if host == "" {
		return errors.New("no host")
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return fmt.Errorf("bad port %q", port)
	}
	return nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestManifestDirLayout keeps every manifest where the loader finds it: a
// subdirectory or a .yml file would silently escape the checks above.
func TestManifestDirLayout(t *testing.T) {
	entries, err := os.ReadDir(manifestDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir():
			t.Errorf("deploy/kubernetes/%s: subdirectories are not checked; keep manifests flat", name)
		case !strings.HasSuffix(name, ".yaml"):
			t.Errorf("deploy/kubernetes/%s: manifests use the .yaml extension; nothing else belongs here", name)
		}
	}
}
