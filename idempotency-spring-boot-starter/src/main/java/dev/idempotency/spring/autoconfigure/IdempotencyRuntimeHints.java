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

import java.util.List;
import java.util.Map;

import dev.idempotency.core.engine.IdempotencyListener;
import dev.idempotency.spring.store.tiered.TieredStoreListener;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;

/**
 * What a GraalVM native image of an application needs from the library (the starter and
 * idempotency-core) beyond what Spring's AOT processing finds by itself: every reflective
 * access of its own code. Each is listed with where it happens (docs/aot.md):
 * <ul>
 * <li>the resources the stores load at run time: the Redis store's Lua scripts, the JDBC
 * store's migration scripts of each database;
 * <li>the JDK proxies that combine several listeners, and the listener methods they
 * invoke reflectively;
 * <li>the classes whose presence the library checks by name at run time
 * ({@code Class.forName}, {@code ClassUtils.isPresent}): a native image answers "absent"
 * for a class that is not registered, which would change what the library does (JSON
 * bodies fingerprinted as raw bytes, Flyway left out of the table's migration...);
 * <li>the methods the library calls reflectively on classes it knows by name: Spring
 * Security's {@code CsrfToken.getParameterName()}, Kafka's {@code Bytes.get()}, the
 * {@code dataSource} property of the transaction managers and the time-out properties of
 * HikariCP that it reads through a {@code BeanWrapper}.
 * </ul>
 * The application's own types that the library reaches reflectively (the results and
 * arguments of {@code @Idempotent} methods, written as JSON and read by SpEL; the
 * exceptions of {@code deterministic-exceptions}) are registered by
 * {@code IdempotentReflectiveProcessor} and {@link DeterministicExceptionsAotProcessor}
 * from what the application declares.
 *
 * @author Idempotency contributors
 */
class IdempotencyRuntimeHints implements RuntimeHintsRegistrar {

	/**
	 * The classes the library looks up by name at run time to learn whether an optional
	 * dependency is there.
	 */
	static final List<String> CLASSES_LOOKED_UP = List.of(
			// idempotency-core, Sha256RequestFingerprinter: JSON canonicalisation
			"tools.jackson.core.json.JsonFactory",
			// IdempotencyAutoConfiguration and IdempotencyTemplate: transactional mode
			"org.springframework.transaction.PlatformTransactionManager",
			"org.springframework.transaction.support.TransactionSynchronizationManager",
			// HttpFilterSettings: anonymous requests where Spring Security runs
			"org.springframework.security.core.context.SecurityContextHolder",
			"org.springframework.security.core.context.ReactiveSecurityContextHolder",
			// IdempotencyMethodAutoConfiguration: the scope of calls made in a servlet
			// request
			"jakarta.servlet.http.HttpServletRequest", "org.springframework.web.context.request.RequestContextHolder",
			// ClientTimeoutWarnings: the Redis clients' time-outs
			"org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory",
			"org.springframework.data.redis.connection.jedis.JedisConnectionFactory", "redis.clients.jedis.Jedis",
			// IdempotencyReactiveAutoConfiguration: servlet extension points a WebFlux
			// application should not define
			"dev.idempotency.spring.web.IdempotencyScopeResolver",
			"dev.idempotency.spring.web.StoredResponseCustomizer",
			"dev.idempotency.spring.web.IdempotencyProblemRenderer",
			// IdempotentMethodInterceptor: Kafka listeners
			"org.springframework.kafka.annotation.KafkaListener",
			// IdempotentRetryFilter: Reactor Netty's response and read time-outs
			"io.netty.handler.timeout.TimeoutException",
			// JdbcIdempotencySchemaInitializer: Flyway and its module for each database
			"org.flywaydb.core.Flyway", "org.flywaydb.database.postgresql.PostgreSQLDatabaseType",
			"org.flywaydb.database.mysql.mariadb.MariaDBDatabaseType", "org.flywaydb.database.mysql.MySQLDatabaseType");

	/**
	 * Spring Security's CSRF tokens, servlet and reactive, whose
	 * {@code getParameterName()} {@code FormCanonicalizer} calls reflectively.
	 */
	static final List<String> CSRF_TOKENS = List.of("org.springframework.security.web.csrf.CsrfToken",
			"org.springframework.security.web.server.csrf.CsrfToken");

	/**
	 * Kafka's {@code Bytes}, whose {@code get()} {@code RecordValue} calls reflectively.
	 */
	static final String KAFKA_BYTES = "org.apache.kafka.common.utils.Bytes";

	private static final String DATA_SOURCE_TRANSACTION_MANAGER = "org.springframework.jdbc.datasource.DataSourceTransactionManager";

	/**
	 * The transaction managers whose {@code dataSource} property
	 * {@code TransactionalMode} reads through a {@code BeanWrapper}, each with the class
	 * that declares its {@code getDataSource()}: Spring's own, which Spring Boot
	 * configures. Another one needs a hint of the application's.
	 */
	static final Map<String, String> TRANSACTION_MANAGERS = Map.of(
			"org.springframework.jdbc.support.JdbcTransactionManager", DATA_SOURCE_TRANSACTION_MANAGER,
			DATA_SOURCE_TRANSACTION_MANAGER, DATA_SOURCE_TRANSACTION_MANAGER,
			"org.springframework.orm.jpa.JpaTransactionManager", "org.springframework.orm.jpa.JpaTransactionManager",
			"org.springframework.orm.jpa.hibernate.HibernateTransactionManager",
			"org.springframework.orm.jpa.hibernate.HibernateTransactionManager");

	/**
	 * HikariCP's data source, whose {@code jdbcUrl}, {@code connectionTimeout} and
	 * {@code dataSourceProperties} {@code JdbcDatabase} and {@code ClientTimeoutWarnings}
	 * read through a {@code BeanWrapper}; the getters are declared by
	 * {@link #HIKARI_CONFIG}.
	 */
	static final String HIKARI_DATA_SOURCE = "com.zaxxer.hikari.HikariDataSource";

	/**
	 * HikariCP's configuration, which declares the getters of
	 * {@link #HIKARI_DATA_SOURCE}.
	 */
	static final String HIKARI_CONFIG = "com.zaxxer.hikari.HikariConfig";

	/**
	 * The getters of {@link #HIKARI_CONFIG} that the library reads.
	 */
	static final List<String> HIKARI_GETTERS = List.of("getJdbcUrl", "getConnectionTimeout", "getDataSourceProperties");

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources().registerPattern("dev/idempotency/spring/store/redis/*.lua");
		hints.resources().registerPattern("dev/idempotency/spring/store/jdbc/migration/postgresql/*.sql");
		hints.resources().registerPattern("dev/idempotency/spring/store/jdbc/migration/mariadb/*.sql");
		hints.proxies().registerJdkProxy(IdempotencyListener.class);
		hints.proxies().registerJdkProxy(TieredStoreListener.class);
		// CompositeListener calls the interface's methods on each listener reflectively
		ReflectionHints reflection = hints.reflection();
		reflection.registerType(IdempotencyListener.class, MemberCategory.INVOKE_PUBLIC_METHODS);
		reflection.registerType(TieredStoreListener.class, MemberCategory.INVOKE_PUBLIC_METHODS);
		// a type that is missing from the image is left out of it: no need to check
		// which optional dependencies the application has
		for (String type : CLASSES_LOOKED_UP) {
			reflection.registerType(TypeReference.of(type));
		}
		for (String type : CSRF_TOKENS) {
			reflection.registerType(TypeReference.of(type),
					(hint) -> hint.withMethod("getParameterName", List.of(), ExecutableMode.INVOKE));
		}
		reflection.registerType(TypeReference.of(KAFKA_BYTES),
				(hint) -> hint.withMethod("get", List.of(), ExecutableMode.INVOKE));
		TRANSACTION_MANAGERS.forEach((manager, declaring) -> {
			reflection.registerType(TypeReference.of(manager));
			reflection.registerType(TypeReference.of(declaring),
					(hint) -> hint.withMethod("getDataSource", List.of(), ExecutableMode.INVOKE));
		});
		reflection.registerType(TypeReference.of(HIKARI_DATA_SOURCE));
		reflection.registerType(TypeReference.of(HIKARI_CONFIG), (hint) -> {
			for (String getter : HIKARI_GETTERS) {
				hint.withMethod(getter, List.of(), ExecutableMode.INVOKE);
			}
		});
	}

}
