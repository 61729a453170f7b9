/*
 * Copyright 2026-present the original author or authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package dev.idempotency.spring.autoconfigure;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import dev.idempotency.core.StoredResponseCodec;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.fingerprint.RequestFingerprinter;
import dev.idempotency.spring.IdempotencyKeySource;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.autoconfigure.IdempotencyPolicyProperties.Fingerprint;
import dev.idempotency.spring.autoconfigure.IdempotencyPolicyProperties.Key;
import dev.idempotency.spring.autoconfigure.IdempotencyProperties.Endpoint;
import dev.idempotency.spring.autoconfigure.IdempotencyProperties.JsonMode;
import dev.idempotency.spring.http.EndpointRule;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.util.StringUtils;
import org.springframework.util.unit.DataSize;

/**
 * Maps {@link IdempotencyProperties} onto {@link NamedPolicies} and
 * {@link EndpointRule}s, rejecting invalid or contradictory settings with an
 * {@link InvalidConfigurationPropertyValueException} that names the property.
 *
 * @author Idempotency contributors
 */
final class PolicyMapper {

	private static final String PREFIX = "idempotency.";

	private final IdempotencyProperties properties;

	PolicyMapper(IdempotencyProperties properties) {
		this.properties = properties;
	}

	/**
	 * Check the global settings that are not part of a policy.
	 */
	void validateGlobalSettings() {
		checkHeaderName("key-header", this.properties.getKeyHeader(), false);
		Key globalKey = this.properties.getKey();
		if (globalKey.getHeader() != null || globalKey.getJsonPointer() != null) {
			throw invalid((globalKey.getHeader() != null) ? "key.header" : "key.json-pointer",
					(globalKey.getHeader() != null) ? globalKey.getHeader() : globalKey.getJsonPointer(),
					"a key source is set per policy (idempotency.policies.<name>.key.header or .key.json-pointer);"
							+ " the header of every other policy is idempotency.key-header");
		}
		checkHeaderName("scope-header", this.properties.getScopeHeader(), true);
		checkHeaderName("client-ttl-header", this.properties.getClientTtlHeader(), true);
		String base = this.properties.getProblemTypeBase();
		try {
			if (!new URI(base).isAbsolute()) {
				throw invalid("problem-type-base", base, "must be an absolute URI");
			}
		}
		catch (URISyntaxException ex) {
			throw invalid("problem-type-base", base, "is not a URI: " + ex.getMessage());
		}
	}

	/**
	 * Build the policies: the default one from the global settings, and one per
	 * configured name.
	 * @param fingerprinters creates the fingerprinter of a policy
	 * @return the policies
	 */
	NamedPolicies policies(Function<FingerprintSettings, RequestFingerprinter> fingerprinters) {
		List<NamedPolicy> policies = new ArrayList<>();
		Map<String, IdempotencyPolicyProperties> named = this.properties.getPolicies();
		if (!named.containsKey(IdempotencyPolicy.DEFAULT_NAME)) {
			policies.add(policy(IdempotencyPolicy.DEFAULT_NAME, new IdempotencyPolicyProperties(), fingerprinters));
		}
		named.forEach((name, policy) -> {
			if (!StringUtils.hasText(name)) {
				throw invalid("policies", name, "policy names must not be blank");
			}
			policies.add(policy(name, policy, fingerprinters));
		});
		return new NamedPolicies(policies);
	}

	/**
	 * Return the exception types each policy stores for idempotent methods, the global
	 * setting included.
	 * @param policies the policies built by {@link #policies(Function)}
	 * @return the types by policy name, with an entry for every policy
	 */
	Map<String, List<Class<? extends Throwable>>> deterministicExceptions(NamedPolicies policies) {
		Map<String, List<Class<? extends Throwable>>> byPolicy = new LinkedHashMap<>();
		for (String name : policies.names()) {
			IdempotencyPolicyProperties own = this.properties.getPolicies().get(name);
			IdempotencyPolicyProperties settings = (own != null) ? own.orElse(this.properties) : this.properties;
			List<Class<? extends Throwable>> types = settings.getDeterministicExceptions();
			byPolicy.put(name, (types != null) ? List.copyOf(types) : List.of());
		}
		return byPolicy;
	}

	/**
	 * Return the name of the property that sets a policy's deterministic exceptions: its
	 * own, or the global one it inherits.
	 * @param name the policy's name
	 * @return the property's name
	 */
	String deterministicExceptionsProperty(String name) {
		IdempotencyPolicyProperties own = this.properties.getPolicies().get(name);
		return PREFIX + name("policies." + name + ".", "deterministic-exceptions",
				(own != null) ? own.getDeterministicExceptions() : null);
	}

	private NamedPolicy policy(String name, IdempotencyPolicyProperties policy,
			Function<FingerprintSettings, RequestFingerprinter> fingerprinters) {
		IdempotencyPolicyProperties settings = policy.orElse(this.properties);
		// an invalid setting is reported under the name it was set with: the policy's
		// own, or the global one it inherits
		String prefix = "policies." + name + ".";
		Duration lockTimeout = settings.getLockTimeout();
		if (lockTimeout.compareTo(IdempotencyPolicy.MIN_LOCK_TIMEOUT) < 0) {
			throw invalid(name(prefix, "lock-timeout", policy.getLockTimeout()), lockTimeout,
					"must be at least " + IdempotencyPolicy.MIN_LOCK_TIMEOUT.toMillis() + "ms");
		}
		Duration ttl = settings.getTtl();
		if (ttl.compareTo(lockTimeout) < 0) {
			throw invalid(name(prefix, "ttl", policy.getTtl()), ttl,
					"must not be shorter than the lock timeout (" + lockTimeout + ") of policy '" + name + "'");
		}
		checkNotNegative(name(prefix, "in-flight-wait", policy.getInFlightWait()), settings.getInFlightWait());
		checkNotNegative(name(prefix, "unavailable-retry-after", policy.getUnavailableRetryAfter()),
				settings.getUnavailableRetryAfter());
		checkNotNegative(name(prefix, "in-progress-retry-after", policy.getInProgressRetryAfter()),
				settings.getInProgressRetryAfter());
		int maxRequestBody = bodySize(name(prefix, "max-request-body", policy.getMaxRequestBody()),
				settings.getMaxRequestBody(), NamedPolicy.MAX_BODY_SIZE);
		// a larger stored body could never be read back
		int maxResponseBody = bodySize(name(prefix, "max-response-body", policy.getMaxResponseBody()),
				settings.getMaxResponseBody(), StoredResponseCodec.MAX_BODY_SIZE);
		Duration minTtl = settings.getMinTtl();
		Duration maxTtl = settings.getMaxTtl();
		String problem = NamedPolicy.minTtlProblem(minTtl, maxTtl);
		if (problem != null) {
			throw invalid(name(prefix, "min-ttl", policy.getMinTtl()), minTtl, problem + " (policy '" + name + "')");
		}
		problem = NamedPolicy.maxTtlProblem(maxTtl, lockTimeout);
		if (problem != null) {
			throw invalid(name(prefix, "max-ttl", policy.getMaxTtl()), maxTtl, problem + " (policy '" + name + "')");
		}
		Fingerprint fingerprint = settings.getFingerprint();
		for (String header : fingerprint.getHeaders()) {
			checkHeaderName(name(prefix, "fingerprint.headers", policy.getFingerprint().getHeaders()), header, false);
		}
		List<String> pointers = fingerprint.getExcludedJsonPointers();
		String pointersName = name(prefix, "fingerprint.excluded-json-pointers",
				policy.getFingerprint().getExcludedJsonPointers());
		for (String pointer : pointers) {
			problem = jsonPointerProblem(pointer);
			if (problem != null) {
				throw invalid(pointersName, pointer, problem);
			}
		}
		IdempotencyKeySource keySource = keySource(prefix, policy.getKey());
		Duration maxExecutionTime = settings.getMaxExecutionTime();
		if (maxExecutionTime != null && (maxExecutionTime.isNegative() || maxExecutionTime.isZero())) {
			throw invalid(name(prefix, "max-execution-time", policy.getMaxExecutionTime()), maxExecutionTime,
					"must be positive");
		}
		IdempotencyPolicy enginePolicy = new IdempotencyPolicy(name, ttl, lockTimeout, settings.getInFlightWait(),
				settings.getOnStoreFailure(), settings.getNonStorableStatuses(), settings.getUnavailableRetryAfter(),
				settings.getInProgressRetryAfter(), Boolean.TRUE.equals(settings.getTransactional()), maxExecutionTime);
		RequestFingerprinter fingerprinter;
		try {
			fingerprinter = fingerprinters
				.apply(new FingerprintSettings(name, fingerprint.getJson() == JsonMode.CANONICAL, pointers));
		}
		catch (IllegalArgumentException ex) {
			throw invalid(pointersName, pointers, ex.getMessage());
		}
		return new NamedPolicy(enginePolicy, fingerprinter, fingerprint.getHeaders(), maxRequestBody, maxResponseBody,
				minTtl, maxTtl, keySource);
	}

	// a policy's own setting: the global one is refused above
	private static IdempotencyKeySource keySource(String prefix, Key key) {
		String headerName = prefix + "key.header";
		String pointerName = prefix + "key.json-pointer";
		String header = key.getHeader();
		String pointer = key.getJsonPointer();
		if (header != null && pointer != null) {
			throw invalid(pointerName, pointer, "must not be set together with " + headerName + " ('" + header
					+ "'): a policy reads its key from one place");
		}
		if (header != null) {
			checkHeaderName(headerName, header, false);
			return IdempotencyKeySource.header(header);
		}
		if (pointer != null) {
			String problem = pointer.isEmpty() ? "must point into the body, not at the whole body"
					: jsonPointerProblem(pointer);
			if (problem != null) {
				throw invalid(pointerName, pointer, problem);
			}
			return IdempotencyKeySource.jsonPointer(pointer);
		}
		return IdempotencyKeySource.keyHeader();
	}

	/**
	 * Build the configured endpoint rules.
	 * @param policies the policies the rules may name
	 * @return the rules, in configuration order
	 */
	List<EndpointRule> endpointRules(NamedPolicies policies) {
		List<EndpointRule> rules = new ArrayList<>();
		List<Endpoint> endpoints = this.properties.getEndpoints();
		for (int i = 0; i < endpoints.size(); i++) {
			Endpoint endpoint = endpoints.get(i);
			String prefix = "endpoints[" + i + "].";
			String path = endpoint.getPath();
			if (!StringUtils.hasText(path)) {
				throw invalid(prefix + "path", path, "must be set");
			}
			if (endpoint.getMethods().isEmpty()) {
				throw invalid(prefix + "methods", endpoint.getMethods(), "must name at least one HTTP method");
			}
			for (String method : endpoint.getMethods()) {
				checkHeaderName(prefix + "methods", method, false);
			}
			if (policies.get(endpoint.getPolicy()) == null) {
				throw invalid(prefix + "policy", endpoint.getPolicy(),
						"names a policy that is not configured (configured: " + policies.names() + ")");
			}
			try {
				rules.add(new EndpointRule(endpoint.getMethods(), path, endpoint.getPolicy(), endpoint.isRequired()));
			}
			catch (IllegalArgumentException ex) {
				// a PatternParseException: named by its superclass,
				// so that this class loads without spring-web,
				// in an application that is not a web application
				throw invalid(prefix + "path", path, "is not a valid path pattern: " + ex.getMessage());
			}
		}
		return rules;
	}

	private static String name(String policyPrefix, String property, @Nullable Object override) {
		return (override != null) ? policyPrefix + property : property;
	}

	private static void checkNotNegative(String name, Duration value) {
		if (value.isNegative()) {
			throw invalid(name, value, "must not be negative");
		}
	}

	private static int bodySize(String name, DataSize size, int max) {
		if (size.isNegative() || size.toBytes() > max) {
			throw invalid(name, size, "must be between 0 and " + max + " bytes");
		}
		return (int) size.toBytes();
	}

	private static void checkHeaderName(String name, @Nullable String value, boolean optional) {
		if (value == null || (optional && value.isEmpty())) {
			if (optional) {
				return;
			}
			throw invalid(name, value, "must be set");
		}
		if (value.isEmpty()) {
			throw invalid(name, value, "must not be empty");
		}
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			boolean token = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
					|| "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
			if (!token) {
				throw invalid(name, value, "is not a valid HTTP token");
			}
		}
	}

	/**
	 * Return why a JSON Pointer (RFC 6901) is not valid for exclusion.
	 * @param pointer the pointer
	 * @return the problem, or {@code null} if the pointer is valid
	 */
	static @Nullable String jsonPointerProblem(String pointer) {
		if (pointer.isEmpty()) {
			return "the empty JSON Pointer would exclude the whole body";
		}
		if (pointer.charAt(0) != '/') {
			return "a JSON Pointer must start with '/'";
		}
		for (int i = 0; i < pointer.length(); i++) {
			if (pointer.charAt(i) == '~') {
				char next = (i + 1 < pointer.length()) ? pointer.charAt(i + 1) : 0;
				if (next != '0' && next != '1') {
					return "'~' must be followed by '0' or '1' in a JSON Pointer";
				}
			}
		}
		return null;
	}

	private static InvalidConfigurationPropertyValueException invalid(String name, @Nullable Object value,
			@Nullable String reason) {
		return new InvalidConfigurationPropertyValueException(PREFIX + name, value, reason);
	}

	/**
	 * Fingerprint settings of one policy.
	 *
	 * @param policy the policy's name
	 * @param canonicalJson whether JSON bodies are canonicalised
	 * @param excludedJsonPointers JSON Pointers of members left out
	 */
	record FingerprintSettings(String policy, boolean canonicalJson, List<String> excludedJsonPointers) {

	}

}
