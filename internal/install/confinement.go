package install

import (
	"maps"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
)

// ConfinementPolicy confines each operator's own identity to its share.
// That identity is its ServiceAccount
// (system:serviceaccount:<namespace>:<id>-operator), which may create,
// change and delete the resources operators write (Integrations, Pipes,
// kits, builds, Deployments, ConfigMaps, Services) only when the object
// is, or stays, labelled with its own id. RBAC cannot say that: it grants
// a verb on every object of a kind in a namespace. RBAC does confine it
// to the namespaces it serves: it holds rights on namespaced resources
// only there.
//
// The writes of the protocol that touch another operator's object stay
// allowed, each for the one case that needs it:
//   - the release (docs/architecture.md, Handover): the previous owner records it in the
//     status of an integration that status still says is its own, and
//     hands the label over to the id the annotation names;
//   - adoption: a resource that names no operator is stamped with the
//     adopter's id, and a label catches up with an assignment to it;
//   - takeover of a child: after a move, the new owner labels with its id
//     a child that a Caravan resource controls, keeping its owner
//     references: the previous owner's Deployment, ConfigMaps and
//     Services, and the Integration of a moved Pipe; also those that an
//     operator other than Caravan's (Camel K's) made, which name no
//     operator. (It deletes only what is labelled with its own id, so it
//     takes a child over before deleting it.)
//     Where no label policy relabels in the same request, it assigns
//     the Integration of a moved Pipe to itself and leaves the label to
//     the previous owner's release.
//   - the default operator's orphan mark: a status change of another
//     operator's resource that keeps its phase and its owner; only the
//     default operator may make it (OrphanMarkPolicy).
//
// The policy has no parameter, so its cost does not grow with the number
// of operators: Kubernetes evaluates a policy once per parameter its
// binding selects. The request's user names the identity: a
// ServiceAccount named <id>-operator is operator id's when it holds the
// verb use on integrationoperators/<id>, as every operator does, and is
// no administrator (it cannot escalate ClusterRoles); users' requests cost
// one string comparison.
const ConfinementPolicy = "caravan-operator-confinement"

// ForeignConfinementPolicy confines the identity of an operator that is not Caravan's (Camel
// K's) to what no Caravan operator owns. Such an identity holds the verb foreign
// (ForeignVerb) on integrationoperators, and use on its own id (caravan grant --as-operator).
// It may create, change and delete the resources operators write while they are, and stay,
// labelled with no operator or with an operator it holds use on: the children it makes unlabelled
// (Camel K labels no Deployment, ConfigMap or Service with its id), and its own Integrations,
// kits and builds. What a Caravan operator took over, labelled with that operator's id, is out of
// its reach, including a status write still in flight when an integration moves; but the takeover
// of a child that a camel.apache.org resource controls, relabelled to its own id with its owner
// references kept, which Caravan's operators may make too: the Integration of a Pipe moved back
// to it, whose label follows the annotation it sets. ConfinementPolicy does not judge it: its
// rules would refuse the unlabelled children it makes.
const ForeignConfinementPolicy = "caravan-operator-foreign-confinement"

// ForeignVerb, held on integrationoperators, declares an identity to be an operator that is not
// Caravan's, which ForeignConfinementPolicy confines.
const ForeignVerb = "foreign"

// OrphanMarkPolicy lets only the default operator make the orphan mark
// that ConfinementPolicy admits. The mark is a status change, by an
// operator's identity, of a resource labelled with another operator's id,
// other than a release. Its one parameter is the default operator's
// IntegrationOperator. Without one, the policy refuses nothing: a binding
// whose parameter is missing cannot evaluate its match conditions, so
// refusing then would refuse every status write of Caravan's resources.
const OrphanMarkPolicy = "caravan-operator-orphan-mark"

// confinedResources are what the policy judges, by API group.
var confinedResources = map[string][]string{
	camelv1.GroupVersion.Group: {"integrations", "integrations/status", "pipes", "pipes/status",
		"kameletbindings", "kameletbindings/status", "integrationkits", "integrationkits/status", "builds", "builds/status"},
	"apps":                  {"deployments"},
	"batch":                 {"cronjobs"},
	"policy":                {"poddisruptionbudgets"},
	"networking.k8s.io":     {"ingresses"},
	"monitoring.coreos.com": {"podmonitors"},
	"":                      {"configmaps", "services"},
}

const (
	// homeNamespace is where the parameter's operator runs: where it was
	// installed, or where it registered.
	homeNamespace = `has(params.metadata.annotations) && '` + InstalledNamespaceAnnotation + `' in params.metadata.annotations` +
		` ? params.metadata.annotations['` + InstalledNamespaceAnnotation + `']` +
		` : (has(params.status) && has(params.status.namespace) ? params.status.namespace : '')`
	// serviceAccountName is the name of the ServiceAccount that made the
	// request, and requestID the operator id it names (<id>-operator).
	serviceAccountName = `request.userInfo.username.substring(request.userInfo.username.lastIndexOf(':') + 1)`
	requestID          = serviceAccountName + `.substring(0, size(` + serviceAccountName + `) - size('-operator'))`
	// anOperatorsServiceAccount: a ServiceAccount named like an
	// operator's identity.
	anOperatorsServiceAccount = `request.userInfo.username.startsWith('system:serviceaccount:')` +
		` && request.userInfo.username.endsWith('-operator') && size(` + serviceAccountName + `) > size('-operator')`
	// isOperatorIdentity: it holds the verb use on its operator, as an
	// operator's identity does, and is no administrator. (Match
	// conditions cannot use variables. An expression may make two
	// authorizer checks at most: a third exceeds its cost limit.)
	isOperatorIdentity = `authorizer.group('camel.apache.org').resource('integrationoperators').name(` + requestID + `).check('use').allowed()` +
		` && !(` + isAdministrator + `)`
	isAdministrator = `authorizer.group('rbac.authorization.k8s.io').resource('clusterroles').check('escalate').allowed()`
	// isForeign: the identity is declared an operator that is not Caravan's, in the request's
	// namespace (ForeignVerb).
	isForeign  = `authorizer.group('camel.apache.org').resource('integrationoperators').namespace(request.namespace).check('` + ForeignVerb + `').allowed()`
	notADryRun = `!(has(request.dryRun) && request.dryRun)`

	newID       = `object != null && has(object.metadata.labels) && 'camel.apache.org/operator.id' in object.metadata.labels ? object.metadata.labels['camel.apache.org/operator.id'] : ''`
	oldID       = `oldObject != null && has(oldObject.metadata.labels) && 'camel.apache.org/operator.id' in oldObject.metadata.labels ? oldObject.metadata.labels['camel.apache.org/operator.id'] : ''`
	newAssigned = `object != null && has(object.metadata.annotations) && 'camel.apache.org/operator.id' in object.metadata.annotations ? object.metadata.annotations['camel.apache.org/operator.id'] : ''`
	oldAssigned = `oldObject != null && has(oldObject.metadata.annotations) && 'camel.apache.org/operator.id' in oldObject.metadata.annotations ? oldObject.metadata.annotations['camel.apache.org/operator.id'] : ''`
	newOwner    = `object != null && has(object.status) && has(object.status.ownership) && has(object.status.ownership.owner) ? object.status.ownership.owner : ''`
	oldOwner    = `oldObject != null && has(oldObject.status) && has(oldObject.status.ownership) && has(oldObject.status.ownership.owner) ? oldObject.status.ownership.owner : ''`
	newPhase    = `object != null && has(object.status) && has(object.status.phase) ? object.status.phase : ''`
	oldPhase    = `oldObject != null && has(oldObject.status) && has(oldObject.status.phase) ? oldObject.status.phase : ''`
	// controlled: the object as it was is controlled by a Caravan resource.
	controlled = `oldObject != null && has(oldObject.metadata.ownerReferences) && oldObject.metadata.ownerReferences.exists(r,` +
		` has(r.controller) && r.controller && r.apiVersion.startsWith('camel.apache.org/'))`
	refsKept = `object != null && has(object.metadata.ownerReferences) && variables.controlled` +
		` && object.metadata.ownerReferences == oldObject.metadata.ownerReferences`
	mayCreate = `request.operation != 'CREATE' || variables.newID == variables.id`
	mayUpdate = `request.operation != 'UPDATE'` +
		// Its own, and it stays so, or its label follows the assignment.
		` || (variables.oldID == variables.id && (variables.newID == variables.id` +
		` || (variables.newID == variables.newAssigned && variables.newAssigned == variables.oldAssigned)))` +
		// The label catches up with an assignment to it.
		` || (variables.oldAssigned == variables.id && variables.newAssigned == variables.id && variables.newID == variables.id)` +
		// Adoption of a resource that names no operator.
		` || (request.resource.group == 'camel.apache.org' && variables.oldID == '' && variables.oldAssigned == ''` +
		` && variables.newID == variables.id)` +
		// Takeover of a child after a move: its label (also a child that an operator other
		// than Caravan's made, which names none), or, where no label policy mirrors it in the
		// same request, its assignment alone (the previous owner hands the label over).
		` || (variables.refsKept && (variables.newID == variables.id` +
		` || (variables.oldID != '' && variables.newAssigned == variables.id && variables.newID == variables.oldID)))` +
		// The release, recorded by the owner its status still names.
		` || (` + release + `)` +
		// The orphan mark (only the default operator's: OrphanMarkPolicy).
		` || (` + orphanMark + `)`
	release    = `has(request.subResource) && request.subResource == 'status' && variables.oldOwner == variables.id && variables.newOwner == variables.id`
	orphanMark = `has(request.subResource) && request.subResource == 'status' && variables.oldOwner == variables.newOwner && variables.oldPhase == variables.newPhase`
	mayDelete  = `request.operation != 'DELETE' || variables.oldID == variables.id`

	createMessage = `'the identity of operator ' + variables.id + ' may create ' + request.kind.kind +
		' only labelled camel.apache.org/operator.id=' + variables.id + ', and ' + request.name + ' is ' +
		(variables.newID == '' ? 'not labelled' : 'labelled ' + variables.newID)`
	updateMessage = `'the identity of operator ' + variables.id + ' may change ' + request.kind.kind + ' ' + request.name +
		' only while it is labelled camel.apache.org/operator.id=' + variables.id + ', and it is ' +
		(variables.oldID == '' ? 'not labelled' : 'labelled ' + variables.oldID) +
		(variables.newID != variables.oldID ? ' (the change labels it ' + (variables.newID == '' ? 'with none' : variables.newID) + ')' : '')`
	deleteMessage = `'the identity of operator ' + variables.id + ' may delete ' + request.kind.kind + ' ' + request.name +
		' only while it is labelled camel.apache.org/operator.id=' + variables.id + ', and it is ' +
		(variables.oldID == '' ? 'not labelled' : 'labelled ' + variables.oldID)`
)

func confinementRules() *admissionv1.MatchResources {
	m := &admissionv1.MatchResources{}
	for _, group := range slices.Sorted(maps.Keys(confinedResources)) {
		m.ResourceRules = append(m.ResourceRules, admissionv1.NamedRuleWithOperations{
			RuleWithOperations: admissionv1.RuleWithOperations{
				Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update, admissionv1.Delete},
				Rule: admissionv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"},
					Resources: append([]string(nil), confinedResources[group]...)},
			},
		})
	}
	return m
}

func confinementPolicy() client.Object {
	forbidden := ptr.To(metav1.StatusReasonForbidden)
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
		ObjectMeta: metav1.ObjectMeta{Name: ConfinementPolicy},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionv1.Fail),
			MatchConstraints: confinementRules(),
			MatchConditions:  operatorIdentityConditions(),
			Variables:        confinementVariables(),
			Validations: []admissionv1.Validation{
				{Expression: mayCreate, MessageExpression: createMessage, Reason: forbidden},
				{Expression: mayUpdate, MessageExpression: updateMessage, Reason: forbidden},
				{Expression: mayDelete, MessageExpression: deleteMessage, Reason: forbidden},
			},
		},
	}
}

// operatorIdentityConditions match the requests of a Caravan operator's own
// identity, but dry runs, which change nothing, and an identity declared an
// operator that is not Caravan's (ForeignConfinementPolicy judges those). The operator's probe of
// the label policy is one: a create that it should have labelled.
func operatorIdentityConditions() []admissionv1.MatchCondition {
	return []admissionv1.MatchCondition{
		{Name: "an-operators-service-account", Expression: anOperatorsServiceAccount},
		{Name: "not-a-dry-run", Expression: notADryRun},
		{Name: "an-operators-identity", Expression: isOperatorIdentity},
		{Name: "not-a-foreign-operators-identity", Expression: `!(` + isForeign + `)`},
	}
}

func confinementVariables() []admissionv1.Variable {
	v := func(name, expr string) admissionv1.Variable {
		return admissionv1.Variable{Name: name, Expression: expr}
	}
	return []admissionv1.Variable{
		v("id", requestID),
		v("newID", newID), v("oldID", oldID), v("newAssigned", newAssigned), v("oldAssigned", oldAssigned),
		v("newOwner", newOwner), v("oldOwner", oldOwner), v("newPhase", newPhase), v("oldPhase", oldPhase),
		v("controlled", controlled), v("refsKept", refsKept),
	}
}

// confinementBinding applies ConfinementPolicy, which has no parameter.
func confinementBinding() client.Object {
	return denyBinding(metav1.ObjectMeta{Name: ConfinementPolicy}, ConfinementPolicy, nil)
}

const (
	// mayUseOldID and mayUseNewID: the identity holds use on the operator the object was, or will
	// be, labelled with.
	mayUseOldID = `authorizer.group('camel.apache.org').resource('integrationoperators').namespace(request.namespace)` +
		`.name(variables.oldID).check('use').allowed()`
	mayUseNewID = `authorizer.group('camel.apache.org').resource('integrationoperators').namespace(request.namespace)` +
		`.name(variables.newID).check('use').allowed()`
	foreignOldMessage = `request.userInfo.username + ' is declared an operator that is not Caravan\'s, and may not ' +
		(request.operation == 'DELETE' ? 'delete ' : 'change ') + request.kind.kind + ' ' + request.name +
		': it is labelled camel.apache.org/operator.id=' + variables.oldID + ', an operator it does not hold the verb use on'`
	foreignNewMessage = `request.userInfo.username + ' is declared an operator that is not Caravan\'s, and may not label ' +
		request.kind.kind + ' ' + request.name + ' camel.apache.org/operator.id=' + variables.newID +
		': it does not hold the verb use on that operator'`
)

// foreignConfinementPolicy is ForeignConfinementPolicy: it matches the writes of identities that
// hold ForeignVerb, but administrators' and dry runs.
func foreignConfinementPolicy() client.Object {
	forbidden := ptr.To(metav1.StatusReasonForbidden)
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
		ObjectMeta: metav1.ObjectMeta{Name: ForeignConfinementPolicy},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionv1.Fail),
			MatchConstraints: confinementRules(),
			MatchConditions: []admissionv1.MatchCondition{
				{Name: "not-a-dry-run", Expression: notADryRun},
				{Name: "a-foreign-operators-identity", Expression: isForeign + ` && !(` + isAdministrator + `)`},
			},
			Variables: []admissionv1.Variable{{Name: "oldID", Expression: oldID}, {Name: "newID", Expression: newID},
				{Name: "controlled", Expression: controlled}, {Name: "refsKept", Expression: refsKept}},
			Validations: []admissionv1.Validation{
				// Its own, or the takeover of a child (one its annotation assigns, the label following).
				{Expression: `variables.oldID == '' || ` + mayUseOldID + ` || (variables.refsKept && variables.newID != '' && ` + mayUseNewID + `)`,
					MessageExpression: foreignOldMessage, Reason: forbidden},
				{Expression: `request.operation == 'DELETE' || variables.newID == '' || ` + mayUseNewID,
					MessageExpression: foreignNewMessage, Reason: forbidden},
			},
		},
	}
}

// orphanMarkPolicy refuses the orphan mark to every operator identity
// but the default operator's, its parameter.
func orphanMarkPolicy() client.Object {
	m := &admissionv1.MatchResources{}
	var status []string
	for _, r := range confinedResources[camelv1.GroupVersion.Group] {
		if strings.HasSuffix(r, "/status") {
			status = append(status, r)
		}
	}
	m.ResourceRules = []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
		Operations: []admissionv1.OperationType{admissionv1.Update},
		Rule:       admissionv1.Rule{APIGroups: []string{camelv1.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: status},
	}}}
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
		ObjectMeta: metav1.ObjectMeta{Name: OrphanMarkPolicy},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail), ParamKind: operatorParam(), MatchConstraints: m,
			MatchConditions: append(operatorIdentityConditions(),
				admissionv1.MatchCondition{Name: "another-operators-and-no-release",
					Expression: `(` + oldID + `) != (` + requestID + `) && !((` + oldOwner + `) == (` + requestID + `) && (` + newOwner + `) == (` + requestID + `))`}),
			Validations: []admissionv1.Validation{{
				Expression: `request.userInfo.username == 'system:serviceaccount:' + (` + homeNamespace + `) + ':' + params.metadata.name + '-operator'`,
				MessageExpression: `'only the default operator, ' + params.metadata.name + ', may change the status of ' + request.kind.kind + ' ' + request.name +
					' while it is labelled for another operator'`,
				Reason: ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
}

// orphanMarkBinding applies OrphanMarkPolicy with the default operator's
// IntegrationOperator; without one, it refuses nothing.
func orphanMarkBinding() client.Object {
	return denyBinding(metav1.ObjectMeta{Name: OrphanMarkPolicy}, OrphanMarkPolicy, &admissionv1.ParamRef{
		Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{DefaultLabel: "true"}},
		ParameterNotFoundAction: ptr.To(admissionv1.AllowAction),
	})
}

// denyBinding binds policy, with param as its parameter (nil for none),
// refusing what it refuses.
func denyBinding(meta metav1.ObjectMeta, policy string, param *admissionv1.ParamRef) *admissionv1.ValidatingAdmissionPolicyBinding {
	return &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
		ObjectMeta: meta,
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: policy, ParamRef: param,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
}
