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

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.idempotency.core.store.ReplayCachingStore;
import dev.idempotency.spring.http.AnonymousRequests;
import dev.idempotency.spring.http.HttpContract;
import dev.idempotency.spring.store.tiered.ClaimCommit;
import dev.idempotency.spring.store.tiered.TieredClaimMode;
import dev.idempotency.spring.webflux.IdempotencyWebFilter;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * Configuration properties of idempotent endpoints: the global policy settings (inherited
 * from {@link IdempotencyPolicyProperties}), named policies that override them, endpoints
 * matched by path, the filter and the store.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@ConfigurationProperties("idempotency")
public class IdempotencyProperties extends IdempotencyPolicyProperties {

	/**
	 * Whether to protect idempotent endpoints with the idempotency filter.
	 */
	private boolean enabled = true;

	/**
	 * Name of the request header that carries the idempotency key.
	 */
	private String keyHeader = HttpContract.KEY_HEADER;

	/**
	 * Name of a request header whose value scopes keys (for example a tenant set by a
	 * gateway). When absent from a request, keys are scoped by the authenticated
	 * principal, else global.
	 */
	private @Nullable String scopeHeader;

	/**
	 * What happens, when Spring Security is on the class path, to a request to an
	 * idempotent endpoint that has no authenticated principal (and no scope header
	 * value), whose key falls into the global scope shared by every anonymous caller:
	 * 'allow' it silently, 'warn' once per policy, or 'reject' it with a 403 problem.
	 */
	private AnonymousRequests anonymousRequests = AnonymousRequests.WARN;

	/**
	 * Base of the 'type' URIs of the problem details the filter answers with; the
	 * problem's name is appended.
	 */
	private String problemTypeBase = HttpContract.PROBLEM_TYPE_BASE;

	/**
	 * Whether responses under a key carry an 'Idempotency-Expires' header with the expiry
	 * of its record.
	 */
	private boolean expiresHeader = true;

	/**
	 * Name of a request header with which a client may ask for a TTL in seconds, clamped
	 * to min-ttl and max-ttl. Off when not set.
	 */
	private @Nullable String clientTtlHeader;

	private final ResponseHeaders responseHeaders = new ResponseHeaders();

	/**
	 * Named policies, selected with @Idempotent("name"), each overriding any of the
	 * global ttl, lock-timeout, in-flight-wait, max-request-body, max-response-body,
	 * on-store-failure, non-storable-statuses, unavailable-retry-after,
	 * in-progress-retry-after, min-ttl, max-ttl and fingerprint settings.
	 */
	private final Map<String, IdempotencyPolicyProperties> policies = new LinkedHashMap<>();

	/**
	 * Idempotent endpoints matched by HTTP method and path pattern, for handlers that
	 * cannot be annotated with @Idempotent.
	 */
	private final List<Endpoint> endpoints = new ArrayList<>();

	private final Filter filter = new Filter();

	private final Store store = new Store();

	private final Redis redis = new Redis();

	private final Tiered tiered = new Tiered();

	private final ReplayCache replayCache = new ReplayCache();

	private final Encryption encryption = new Encryption();

	/**
	 * Create the properties with every global policy setting at its default.
	 */
	public IdempotencyProperties() {
		inherit(IdempotencyPolicyProperties.defaults());
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getKeyHeader() {
		return this.keyHeader;
	}

	public void setKeyHeader(String keyHeader) {
		this.keyHeader = keyHeader;
	}

	public @Nullable String getScopeHeader() {
		return this.scopeHeader;
	}

	public void setScopeHeader(@Nullable String scopeHeader) {
		this.scopeHeader = scopeHeader;
	}

	public AnonymousRequests getAnonymousRequests() {
		return this.anonymousRequests;
	}

	public void setAnonymousRequests(AnonymousRequests anonymousRequests) {
		this.anonymousRequests = anonymousRequests;
	}

	public String getProblemTypeBase() {
		return this.problemTypeBase;
	}

	public void setProblemTypeBase(String problemTypeBase) {
		this.problemTypeBase = problemTypeBase;
	}

	public boolean isExpiresHeader() {
		return this.expiresHeader;
	}

	public void setExpiresHeader(boolean expiresHeader) {
		this.expiresHeader = expiresHeader;
	}

	public @Nullable String getClientTtlHeader() {
		return this.clientTtlHeader;
	}

	public void setClientTtlHeader(@Nullable String clientTtlHeader) {
		this.clientTtlHeader = clientTtlHeader;
	}

	public ResponseHeaders getResponseHeaders() {
		return this.responseHeaders;
	}

	public Map<String, IdempotencyPolicyProperties> getPolicies() {
		return this.policies;
	}

	public List<Endpoint> getEndpoints() {
		return this.endpoints;
	}

	public Filter getFilter() {
		return this.filter;
	}

	public Store getStore() {
		return this.store;
	}

	public Redis getRedis() {
		return this.redis;
	}

	public Tiered getTiered() {
		return this.tiered;
	}

	public ReplayCache getReplayCache() {
		return this.replayCache;
	}

	public Encryption getEncryption() {
		return this.encryption;
	}

	/**
	 * How request bodies are fingerprinted.
	 */
	public enum JsonMode {

		/**
		 * JSON bodies are canonicalised: member order and whitespace do not matter.
		 */
		CANONICAL,

		/**
		 * Bodies are hashed as the raw bytes received.
		 */
		RAW

	}

	/**
	 * Which store keeps idempotency records.
	 */
	public enum StoreType {

		/**
		 * Tiered when both Redis and a DataSource are available, else whichever is, else
		 * in-memory (with a warning).
		 */
		AUTO,

		/**
		 * Redis as the fast path, PostgreSQL, MariaDB or MySQL as the durable backstop.
		 */
		TIERED,

		/**
		 * Redis only.
		 */
		REDIS,

		/**
		 * PostgreSQL, MariaDB or MySQL (JDBC) only.
		 */
		JDBC,

		/**
		 * Memory of this JVM: for tests and single-instance runs.
		 */
		MEMORY

	}

	/**
	 * Selection of the response headers stored for replay.
	 */
	public static class ResponseHeaders {

		/**
		 * Names of the only response headers to store for replay (Content-Type is always
		 * stored). Empty stores every header that is not excluded.
		 */
		private List<String> include = new ArrayList<>();

		/**
		 * Names of response headers never to store for replay, in addition to the default
		 * exclusions, and besides hop-by-hop headers, Date, Content-Length and
		 * Set-Cookie, which never are. A name ending in '*' matches every header that
		 * starts with it.
		 */
		private List<String> exclude = new ArrayList<>();

		/**
		 * Names of response headers not stored nor replayed by default: CORS headers
		 * (they answer one request's origin; a retry's own CORS processing sets them) and
		 * headers that carry credentials. Set it to change that list; 'exclude' adds to
		 * it. A name ending in '*' matches every header that starts with it.
		 */
		private List<String> defaultExclude = new ArrayList<>(HttpContract.EXCLUDED_RESPONSE_HEADERS);

		public List<String> getInclude() {
			return this.include;
		}

		public void setInclude(List<String> include) {
			this.include = include;
		}

		public List<String> getExclude() {
			return this.exclude;
		}

		public void setExclude(List<String> exclude) {
			this.exclude = exclude;
		}

		public List<String> getDefaultExclude() {
			return this.defaultExclude;
		}

		public void setDefaultExclude(List<String> defaultExclude) {
			this.defaultExclude = defaultExclude;
		}

	}

	/**
	 * An idempotent endpoint matched by method and path.
	 */
	public static class Endpoint {

		/**
		 * HTTP methods of the endpoint.
		 */
		private Set<String> methods = new LinkedHashSet<>(List.of("POST", "PATCH"));

		/**
		 * Path pattern of the endpoint within the application, for example
		 * /legacy/orders/{id}.
		 */
		private @Nullable String path;

		/**
		 * Name of the policy that applies.
		 */
		private String policy = "default";

		/**
		 * Whether requests without an idempotency key are rejected with 400.
		 */
		private boolean required = true;

		public Set<String> getMethods() {
			return this.methods;
		}

		public void setMethods(Set<String> methods) {
			this.methods = methods;
		}

		public @Nullable String getPath() {
			return this.path;
		}

		public void setPath(@Nullable String path) {
			this.path = path;
		}

		public String getPolicy() {
			return this.policy;
		}

		public void setPolicy(String policy) {
			this.policy = policy;
		}

		public boolean isRequired() {
			return this.required;
		}

		public void setRequired(boolean required) {
			this.required = required;
		}

	}

	/**
	 * Registration of the idempotency filter.
	 */
	public static class Filter {

		/**
		 * Order of the idempotency filter. It must run after authentication (Spring
		 * Security's filter chain is at -100).
		 */
		private int order = IdempotencyWebFilter.DEFAULT_ORDER;

		/**
		 * Whether to check, before each handler runs, that the filter treated the request
		 * as the handler Spring MVC chose requires: an @Idempotent handler the filter did
		 * not protect is refused with a 500 problem instead of running unprotected.
		 */
		private boolean checkHandler = true;

		public int getOrder() {
			return this.order;
		}

		public void setOrder(int order) {
			this.order = order;
		}

		public boolean isCheckHandler() {
			return this.checkHandler;
		}

		public void setCheckHandler(boolean checkHandler) {
			this.checkHandler = checkHandler;
		}

	}

	/**
	 * Selection of the store.
	 */
	public static class Store {

		/**
		 * Store that keeps idempotency records.
		 */
		private StoreType type = StoreType.AUTO;

		public StoreType getType() {
			return this.type;
		}

		public void setType(StoreType type) {
			this.type = type;
		}

	}

	/**
	 * Settings of the Redis store.
	 */
	public static class Redis {

		/**
		 * Prefix of the Redis keys of idempotency records.
		 */
		private String keyPrefix = "idempotency:";

		/**
		 * Longest time a record is kept in Redis; in tiered mode shorter than the TTL
		 * keeps Redis small while PostgreSQL keeps the record. Unset keeps it for its
		 * whole TTL.
		 */
		private @Nullable Duration ttl;

		public String getKeyPrefix() {
			return this.keyPrefix;
		}

		public void setKeyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
		}

		public @Nullable Duration getTtl() {
			return this.ttl;
		}

		public void setTtl(@Nullable Duration ttl) {
			this.ttl = ttl;
		}

	}

	/**
	 * Settings of the replay cache: replays of completed keys answered from this
	 * instance's memory for a few seconds, in front of the store.
	 */
	public static class ReplayCache {

		/**
		 * Whether repeated replays of a completed key are answered from this instance's
		 * memory. An eviction made through another instance may then go unseen here for
		 * up to the time to live.
		 */
		private boolean enabled;

		/**
		 * How long a replay is answered from memory at most; never longer than the record
		 * lives.
		 */
		private Duration timeToLive = ReplayCachingStore.DEFAULT_TIME_TO_LIVE;

		/**
		 * Most memory the cached responses may take (bodies, headers and a fixed overhead
		 * per entry). A response larger than an eighth of it is not cached.
		 */
		private DataSize maxSize = DataSize.ofBytes(ReplayCachingStore.DEFAULT_MAX_BYTES);

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getTimeToLive() {
			return this.timeToLive;
		}

		public void setTimeToLive(Duration timeToLive) {
			this.timeToLive = timeToLive;
		}

		public DataSize getMaxSize() {
			return this.maxSize;
		}

		public void setMaxSize(DataSize maxSize) {
			this.maxSize = maxSize;
		}

	}

	/**
	 * Encryption at rest of the stored responses.
	 */
	public static class Encryption {

		/**
		 * Whether stored responses (status, headers and body) are encrypted with AES-GCM
		 * before they reach the store. Needs 'keys' and 'primary-key-id', or an
		 * EncryptionKeyRing bean.
		 */
		private boolean enabled;

		/**
		 * Id of the key that encrypts new records; one of 'keys'.
		 */
		private @Nullable String primaryKeyId;

		/**
		 * AES keys (16, 24 or 32 bytes, in base64) by id. Keep an older key until the
		 * longest TTL has passed after it stopped being primary: records written with a
		 * key that is no longer here cannot be replayed.
		 */
		private Map<String, String> keys = new LinkedHashMap<>();

		/**
		 * Until when a response stored in the clear (before encryption was turned on) is
		 * still replayed, as an ISO-8601 instant: the moment encryption is turned on plus
		 * the longest TTL. Unset, such responses are answered as not replayable, since
		 * nothing tells them from a record written into the store by someone else.
		 */
		private @Nullable Instant replayUnencryptedUntil;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public @Nullable String getPrimaryKeyId() {
			return this.primaryKeyId;
		}

		public void setPrimaryKeyId(@Nullable String primaryKeyId) {
			this.primaryKeyId = primaryKeyId;
		}

		public Map<String, String> getKeys() {
			return this.keys;
		}

		public void setKeys(Map<String, String> keys) {
			this.keys = keys;
		}

		public @Nullable Instant getReplayUnencryptedUntil() {
			return this.replayUnencryptedUntil;
		}

		public void setReplayUnencryptedUntil(@Nullable Instant replayUnencryptedUntil) {
			this.replayUnencryptedUntil = replayUnencryptedUntil;
		}

	}

	/**
	 * Settings of the tiered store.
	 */
	public static class Tiered {

		/**
		 * Number of consecutive Redis failures that open the circuit breaker, after which
		 * PostgreSQL alone is used.
		 */
		private int failureThreshold = 3;

		/**
		 * How long the circuit breaker stays open before Redis is tried again.
		 */
		private Duration openDuration = Duration.ofSeconds(5);

		/**
		 * Where a first request's claim is recorded while its handler runs. 'durable'
		 * writes it to PostgreSQL too (two PostgreSQL writes per first request; no
		 * duplicate ever runs the handler again, whatever Redis loses). 'lookup' keeps it
		 * in Redis only and reads PostgreSQL instead (one read and one write per first
		 * request); a duplicate arriving while Redis has lost a running handler's claim
		 * runs the handler a second time.
		 */
		private TieredClaimMode claim = TieredClaimMode.DURABLE;

		/**
		 * How the PostgreSQL claim is committed while Redis holds the same claim.
		 * 'synchronous' waits for PostgreSQL's flush to disk before the handler runs.
		 * MariaDB and MySQL always commit synchronously. 'asynchronous' does not
		 * (synchronous_commit=off for the claim alone): a PostgreSQL crash within about
		 * 600 ms of a claim may lose it, the owner then writes it again, and a duplicate
		 * runs the handler a second time only if Redis loses the same claim before that.
		 * The stored response is always committed synchronously.
		 */
		private ClaimCommit claimCommit = ClaimCommit.SYNCHRONOUS;

		public int getFailureThreshold() {
			return this.failureThreshold;
		}

		public void setFailureThreshold(int failureThreshold) {
			this.failureThreshold = failureThreshold;
		}

		public Duration getOpenDuration() {
			return this.openDuration;
		}

		public void setOpenDuration(Duration openDuration) {
			this.openDuration = openDuration;
		}

		public TieredClaimMode getClaim() {
			return this.claim;
		}

		public void setClaim(TieredClaimMode claim) {
			this.claim = claim;
		}

		public ClaimCommit getClaimCommit() {
			return this.claimCommit;
		}

		public void setClaimCommit(ClaimCommit claimCommit) {
			this.claimCommit = claimCommit;
		}

	}

}
