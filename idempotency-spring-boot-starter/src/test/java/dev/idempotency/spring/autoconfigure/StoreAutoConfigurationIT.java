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

import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreCustomizer;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencySchemaInitializer;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import dev.idempotency.spring.store.tiered.ClaimCommit;
import dev.idempotency.spring.store.tiered.TieredClaimMode;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Store selection by {@code idempotency.store.type} with a real Redis connection factory
 * and a real PostgreSQL data source.
 *
 * @author Idempotency contributors
 */
@ExtendWith(OutputCaptureExtension.class)
class StoreAutoConfigurationIT {

	private static final String SCHEMA = "it_store_config_" + Long.toHexString(System.nanoTime());

	private static LettuceConnectionFactory redis;

	private static HikariDataSource dataSource;

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
		.withPropertyValues("idempotency.jdbc.cleanup.interval=1h");

	@BeforeAll
	static void servers() {
		redis = TestServers.redis().connectionFactory();
		dataSource = TestServers.postgres().dataSource(SCHEMA);
	}

	@AfterAll
	static void closeServers() {
		TestServers.Postgres.dropSchema(dataSource, SCHEMA);
		dataSource.close();
		redis.destroy();
	}

	@Test
	void autoPrefersTieredWhenRedisAndADataSourceExist() {
		this.runner.withUserConfiguration(RedisBean.class, DataSourceBean.class).run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyStore.class);
			assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(TieredIdempotencyStore.class);
			assertThat(context.getBean(TieredIdempotencyStore.class).getClaimMode()).isEqualTo(TieredClaimMode.DURABLE);
			assertThat(context.getBean(TieredIdempotencyStore.class).getClaimCommit())
				.isEqualTo(ClaimCommit.SYNCHRONOUS);
			assertThat(context).hasSingleBean(JdbcIdempotencySchemaInitializer.class);
			assertThat(context).hasSingleBean(JdbcCleanupScheduler.class);
			assertThat(tableExists()).isTrue();
		});
	}

	@Test
	void tieredClaimModeIsConfigurable() {
		this.runner.withUserConfiguration(RedisBean.class, DataSourceBean.class)
			.withPropertyValues("idempotency.tiered.claim=lookup")
			.run((context) -> assertThat(context.getBean(TieredIdempotencyStore.class).getClaimMode())
				.isEqualTo(TieredClaimMode.LOOKUP));
	}

	@Test
	void tieredClaimCommitIsConfigurable() {
		this.runner.withUserConfiguration(RedisBean.class, DataSourceBean.class)
			.withPropertyValues("idempotency.tiered.claim-commit=asynchronous")
			.run((context) -> assertThat(context.getBean(TieredIdempotencyStore.class).getClaimCommit())
				.isEqualTo(ClaimCommit.ASYNCHRONOUS));
	}

	@Test
	void autoUsesRedisAlone() {
		this.runner.withUserConfiguration(RedisBean.class).run((context) -> {
			assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(RedisIdempotencyStore.class);
			assertThat(context).doesNotHaveBean(JdbcCleanupScheduler.class);
		});
	}

	@Test
	void autoUsesADataSourceAlone() {
		this.runner.withUserConfiguration(DataSourceBean.class).run((context) -> {
			assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(JdbcIdempotencyStore.class);
			assertThat(context).hasSingleBean(JdbcCleanupScheduler.class);
		});
	}

	@Test
	void autoWithoutRedisClassesUsesTheDataSource() {
		this.runner.withUserConfiguration(DataSourceBean.class)
			.withClassLoader(new FilteredClassLoader(RedisConnectionFactory.class))
			.run((context) -> assertThat(context.getBean(IdempotencyStore.class))
				.isInstanceOf(JdbcIdempotencyStore.class));
	}

	@Test
	void explicitTypeWinsOverAuto() {
		this.runner.withUserConfiguration(RedisBean.class, DataSourceBean.class)
			.withPropertyValues("idempotency.store.type=redis")
			.run((context) -> assertThat(context.getBean(IdempotencyStore.class))
				.isInstanceOf(RedisIdempotencyStore.class));
		this.runner.withUserConfiguration(RedisBean.class, DataSourceBean.class)
			.withPropertyValues("idempotency.store.type=jdbc")
			.run((context) -> assertThat(context.getBean(IdempotencyStore.class))
				.isInstanceOf(JdbcIdempotencyStore.class));
		this.runner.withUserConfiguration(RedisBean.class, DataSourceBean.class)
			.withPropertyValues("idempotency.store.type=memory")
			.run((context) -> assertThat(context.getBean(IdempotencyStore.class))
				.isInstanceOf(InMemoryIdempotencyStore.class));
	}

	@Test
	void autoWithAnH2DataSourceAloneLeavesItAloneAndSaysSo(CapturedOutput output) {
		this.runner.withUserConfiguration(H2Bean.class)
			.withClassLoader(new FilteredClassLoader("org.flywaydb"))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryIdempotencyStore.class);
				assertThat(h2Tables(context.getBean(DataSource.class))).isZero();
				assertThat(context.getBean(JdbcCleanupScheduler.class).isRunning()).isTrue();
			});
		assertThat(output).contains(
				"Idempotency store: in-memory (idempotency.store.type=auto: no Redis; the" + " DataSource is H2 ");
	}

	@Test
	void autoWithRedisAndAnH2DataSourceTakesRedisAlone(CapturedOutput output) {
		this.runner.withUserConfiguration(RedisBean.class, H2Bean.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(RedisIdempotencyStore.class);
			assertThat(h2Tables(context.getBean(DataSource.class))).isZero();
		});
		assertThat(output).contains(
				"Idempotency store: redis (idempotency.store.type=auto: Redis present; the" + " DataSource is H2 ");
	}

	@Test
	void explicitPostgreSqlStoreOnH2FailsStartUpNamingThePropertyAndTheDatabase() {
		for (String type : new String[] { "jdbc", "tiered" }) {
			this.runner.withUserConfiguration(RedisBean.class, H2Bean.class)
				.withPropertyValues("idempotency.store.type=" + type)
				.run((context) -> assertThat(context).getFailure()
					.rootCause()
					.isInstanceOf(InvalidConfigurationPropertyValueException.class)
					.hasMessageContaining("idempotency.store.type")
					.hasMessageContaining("'" + type + "'")
					.hasMessageContaining("the DataSource is H2"));
		}
	}

	@Test
	void theChosenStoreIsLoggedWithWhy(CapturedOutput output) {
		this.runner.withUserConfiguration(RedisBean.class, DataSourceBean.class)
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("Idempotency store: tiered, Redis in front of PostgreSQL (PostgreSQL ")
			.contains("(idempotency.store.type=auto: Redis and a PostgreSQL DataSource present)");
		this.runner.withUserConfiguration(RedisBean.class)
			.withPropertyValues("idempotency.store.type=redis")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("Idempotency store: redis (idempotency.store.type=redis)");
	}

	@Test
	void eachChoiceIsLoggedOnceWithWhy(CapturedOutput output) {
		this.runner.withUserConfiguration(DataSourceBean.class).run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("Idempotency store: jdbc, PostgreSQL (PostgreSQL ")
			.contains("(idempotency.store.type=auto: a PostgreSQL DataSource present, no Redis)");
		assertThat(choices(output)).isOne();
		this.runner.withUserConfiguration(RedisBean.class).run((context) -> assertThat(context).hasNotFailed());
		assertThat(output)
			.contains("Idempotency store: redis (idempotency.store.type=auto: Redis present, no DataSource)");
		assertThat(choices(output)).isEqualTo(2);
		this.runner.withUserConfiguration(RedisBean.class, DataSourceBean.class)
			.withPropertyValues("idempotency.store.type=tiered")
			.run((context) -> assertThat(context.getBean(IdempotencyStore.class))
				.isInstanceOf(TieredIdempotencyStore.class));
		assertThat(output).contains("Idempotency store: tiered, Redis in front of PostgreSQL (PostgreSQL ")
			.contains("(idempotency.store.type=tiered)");
		assertThat(choices(output)).isEqualTo(3);
		this.runner.withUserConfiguration(RedisBean.class, DataSourceBean.class)
			.withPropertyValues("idempotency.store.type=jdbc")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("(idempotency.store.type=jdbc)");
		assertThat(choices(output)).isEqualTo(4);
		// an explicit memory store says so by its warning alone
		this.runner.withUserConfiguration(RedisBean.class, DataSourceBean.class)
			.withPropertyValues("idempotency.store.type=memory")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("Idempotency records are kept in memory (idempotency.store.type=memory)");
		assertThat(choices(output)).isEqualTo(4);
	}

	@Test
	void onlyTheStoresThatUseTheDataSourceBringItsSchemaAndCleanup() {
		for (String type : new String[] { "redis", "memory" }) {
			this.runner.withUserConfiguration(RedisBean.class, DataSourceBean.class)
				.withPropertyValues("idempotency.store.type=" + type)
				.run((context) -> {
					assertThat(context).hasNotFailed();
					assertThat(context).doesNotHaveBean(JdbcIdempotencySchemaInitializer.class);
					assertThat(context).doesNotHaveBean(JdbcCleanupScheduler.class);
				});
		}
		// auto with a database it leaves out still has the (idle) cleanup
		this.runner.withUserConfiguration(RedisBean.class, H2Bean.class)
			.run((context) -> assertThat(context).hasSingleBean(JdbcCleanupScheduler.class));
	}

	@Test
	void explicitJdbcStoreOnH2AloneFailsStartUp() {
		this.runner.withUserConfiguration(H2Bean.class)
			.withPropertyValues("idempotency.store.type=jdbc")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("'jdbc'")
				.hasMessageContaining("the DataSource is H2"));
	}

	@Test
	void theCustomizersOfTheChosenStoreAreApplied() {
		this.runner.withUserConfiguration(RedisBean.class, DataSourceBean.class, AllCustomizersBean.class)
			.run((context) -> assertThat(context.getBean(AllCustomizersBean.class).called).containsExactly("tiered"));
		this.runner.withUserConfiguration(DataSourceBean.class, AllCustomizersBean.class)
			.run((context) -> assertThat(context.getBean(AllCustomizersBean.class).called).containsExactly("jdbc"));
		this.runner.withUserConfiguration(RedisBean.class, H2Bean.class, AllCustomizersBean.class)
			.run((context) -> assertThat(context.getBean(AllCustomizersBean.class).called).containsExactly("redis"));
		this.runner.withUserConfiguration(H2Bean.class, AllCustomizersBean.class)
			.withClassLoader(new FilteredClassLoader("org.flywaydb"))
			.run((context) -> assertThat(context.getBean(AllCustomizersBean.class).called).isEmpty());
	}

	@Test
	void typeWhoseInfrastructureIsMissingFailsStartUp() {
		this.runner.withUserConfiguration(DataSourceBean.class)
			.withPropertyValues("idempotency.store.type=redis")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("RedisConnectionFactory"));
		this.runner.withUserConfiguration(RedisBean.class)
			.withPropertyValues("idempotency.store.type=tiered")
			.run((context) -> assertThat(context).getFailure().rootCause().hasMessageContaining("DataSource"));
	}

	@Test
	void schemaInitializationAndCleanupCanBeTurnedOff() {
		this.runner.withUserConfiguration(DataSourceBean.class)
			.withPropertyValues("idempotency.jdbc.initialize-schema=never", "idempotency.jdbc.cleanup.enabled=false")
			.run((context) -> {
				assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(JdbcIdempotencyStore.class);
				assertThat(context).doesNotHaveBean(JdbcIdempotencySchemaInitializer.class);
				assertThat(context).doesNotHaveBean(JdbcCleanupScheduler.class);
			});
	}

	@Test
	void withoutFlywayOnTheClassPathTheTableIsCreatedAllTheSame() {
		this.runner.withUserConfiguration(DataSourceBean.class)
			.withClassLoader(new FilteredClassLoader("org.flywaydb"))
			.withPropertyValues("idempotency.jdbc.table-name=no_flyway_records")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(JdbcIdempotencyStore.class);
				assertThat(tableExists("no_flyway_records")).isTrue();
				assertThat(tableExists("no_flyway_records_schema_history")).isFalse();
			});
	}

	@Test
	void embeddedSchemaInitializationLeavesAServerDatabaseAlone() {
		this.runner.withUserConfiguration(DataSourceBean.class)
			.withPropertyValues("idempotency.jdbc.initialize-schema=embedded",
					"idempotency.jdbc.table-name=embedded_only_records")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(tableExists("embedded_only_records")).isFalse();
			});
	}

	@Test
	void propertiesReachTheStores() {
		this.runner.withUserConfiguration(DataSourceBean.class)
			.withPropertyValues("idempotency.jdbc.table-name=custom_records")
			.run((context) -> {
				assertThat(context.getBean(JdbcIdempotencyStore.class).getTableName()).isEqualTo("custom_records");
				assertThat(new JdbcTemplate(dataSource).queryForObject(
						"SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
						Integer.class, SCHEMA, "custom_records"))
					.isEqualTo(1);
			});
	}

	@Test
	void customizersAreApplied() {
		this.runner.withUserConfiguration(RedisBean.class, CustomizerBean.class).run((context) -> {
			assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(RedisIdempotencyStore.class);
			assertThat(context.getBean(CustomizerBean.class).called).isTrue();
		});
	}

	@Test
	void aUserStoreWins() {
		this.runner.withUserConfiguration(RedisBean.class, DataSourceBean.class, UserStore.class).run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyStore.class);
			assertThat(context.getBean(IdempotencyStore.class)).isSameAs(context.getBean(UserStore.class).store);
			assertThat(context).doesNotHaveBean(JdbcIdempotencySchemaInitializer.class);
		});
	}

	private static int choices(CapturedOutput output) {
		return output.getOut().split("Idempotency store: ", -1).length - 1;
	}

	private static int h2Tables(DataSource h2) {
		Integer tables = new JdbcTemplate(h2).queryForObject(
				"SELECT count(*) FROM information_schema.tables WHERE table_schema = 'PUBLIC'", Integer.class);
		return (tables != null) ? tables : -1;
	}

	private static boolean tableExists() {
		return tableExists(JdbcIdempotencyStore.DEFAULT_TABLE_NAME);
	}

	private static boolean tableExists(String table) {
		Integer tables = new JdbcTemplate(dataSource).queryForObject(
				"SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
				Integer.class, SCHEMA, table);
		return tables != null && tables == 1;
	}

	@Configuration(proxyBeanMethods = false)
	static class RedisBean {

		// shared by every test: the test class closes it, not each context
		@Bean(destroyMethod = "")
		RedisConnectionFactory redisConnectionFactory() {
			return redis;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DataSourceBean {

		@Bean(destroyMethod = "")
		DataSource dataSource() {
			return dataSource;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class H2Bean {

		@Bean(destroyMethod = "shutdown")
		EmbeddedDatabase dataSource() {
			return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class CustomizerBean {

		boolean called;

		@Bean
		IdempotencyStoreCustomizer<RedisIdempotencyStore> prefixCustomizer() {
			return (store) -> {
				store.setKeyPrefix("customized:");
				this.called = true;
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class AllCustomizersBean {

		final List<String> called = new ArrayList<>();

		@Bean
		IdempotencyStoreCustomizer<TieredIdempotencyStore> tieredCustomizer() {
			return (store) -> this.called.add("tiered");
		}

		@Bean
		IdempotencyStoreCustomizer<RedisIdempotencyStore> redisCustomizer() {
			return (store) -> this.called.add("redis");
		}

		@Bean
		IdempotencyStoreCustomizer<JdbcIdempotencyStore> jdbcCustomizer() {
			return (store) -> this.called.add("jdbc");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserStore {

		final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();

		@Bean
		IdempotencyStore myStore() {
			return this.store;
		}

	}

}
